"""Faults of a run's files: a reused run id, kills between checkpoints, temp files a kill left,
unreadable metrics and checkpoints. (A full disk and worker faults: puffer-cli's
test_cli_faults.py, through the real command.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from puffer.train import CheckpointError, Config, PolicyConfig, TrainConfig, train
from puffer.train import checkpoint as ckpt
from puffer.train.config import ConfigError
from puffer.train.metrics import read_jsonl, read_metrics
from puffer.train.paths import RunPaths

ENV = "cartpole"


def _config(data_dir: Path, run_id: str = "run", **train_kwargs) -> Config:
    train_config = TrainConfig(
        total_timesteps=1024,
        horizon=16,
        batch_size=256,
        minibatch_size=256,
        update_epochs=1,
        device="cpu",
        seed=1,
        data_dir=str(data_dir),
        run_id=run_id,
        checkpoint_interval=1,
    )
    for key, value in train_kwargs.items():
        setattr(train_config, key, value)
    return Config(train=train_config, policy=PolicyConfig(hidden_size=16), env={"num_envs": 16})


def test_a_reused_run_id_without_resume_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    train(ENV, _config(tmp_path))
    paths = RunPaths(tmp_path, ENV, "run")
    checkpoint, metrics = paths.checkpoint.read_bytes(), paths.metrics.read_bytes()
    with pytest.raises(
        ConfigError,
        match=r"run directory .*/cartpole/run already holds a run \(checkpoint.pt, "
        r"metrics.jsonl\); continue it with train.resume .* or start a new run under another "
        r"train.run_id",
    ):
        train(ENV, _config(tmp_path, total_timesteps=2048))
    assert paths.checkpoint.read_bytes() == checkpoint
    assert paths.metrics.read_bytes() == metrics
    # Both ways out work: resume continues the run, a new id starts another.
    resumed = train(ENV, _config(tmp_path, total_timesteps=2048, resume=True))
    assert [row["step"] for row in read_jsonl(paths.metrics)] == [256 * k for k in range(1, 9)]
    assert resumed.global_step == 2048
    assert train(ENV, _config(tmp_path, run_id="other")).run_dir == tmp_path / ENV / "other"


def test_fresh_run_ids_never_collide(tmp_path: Path) -> None:
    # Two runs of one process within one second share the time stamp and the pid.
    first, second = (ckpt.make_run_dir(_config(tmp_path, run_id=""), ENV) for _ in "ab")
    for paths in (first, second):
        ckpt.release_run_dir(paths)
    first, second = first.root, second.root
    assert first != second and first.is_dir() and second.is_dir()
    if second.name.split("-")[:2] == first.name.split("-")[:2]:  # the same second
        assert second.name == f"{first.name}-2"


def test_a_run_dir_is_locked_while_its_run_lives(tmp_path: Path) -> None:
    paths = ckpt.make_run_dir(_config(tmp_path), ENV)
    assert paths.lock.read_text() == f"{os.getpid()}\n"
    # Another open of the lock (another process, or a second run in this one) is refused.
    with pytest.raises(ConfigError, match=rf"is in use: the run of pid {os.getpid()} trains"):
        ckpt.make_run_dir(_config(tmp_path, resume=False), ENV)
    ckpt.release_run_dir(paths)
    # train() holds it for the run and gives it back however the run ends.
    train(ENV, _config(tmp_path))
    with pytest.raises(ConfigError, match="already holds a run"):
        train(ENV, _config(tmp_path, total_timesteps=2048))
    assert train(ENV, _config(tmp_path, total_timesteps=2048, resume=True)).global_step == 2048


_TRAIN_FOREVER = """
import json, sys
from puffer.train import Config, train
train("cartpole", Config.from_dict(json.loads(sys.argv[1])))
"""


def _run_until(config: Config, ready) -> subprocess.Popen:
    """Start training `config` in a subprocess and return it once `ready()` (bounded)."""
    child = subprocess.Popen([sys.executable, "-c", _TRAIN_FOREVER, json.dumps(config.to_dict())])
    deadline = time.monotonic() + 240
    while not ready():
        assert child.poll() is None, "the run ended before it was ready"
        assert time.monotonic() < deadline, "the run never got ready"
        time.sleep(0.05)
    return child


def test_time_based_checkpoints_bound_what_a_kill_loses(tmp_path: Path) -> None:
    # Far fewer epochs than checkpoint_interval: only the clock checkpoints (every ~0.3 s).
    config = _config(
        tmp_path, total_timesteps=10**9, checkpoint_interval=10**6, checkpoint_minutes=0.005
    )
    paths = RunPaths(tmp_path, ENV, "run")
    child = _run_until(config, lambda: paths.checkpoint.exists())
    time.sleep(1.0)  # a few more epochs and checkpoints
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    saved = ckpt.load(paths.checkpoint)["trainer"]["global_step"]
    logged = read_jsonl(paths.metrics)[-1]["step"]
    assert 0 < saved <= logged < config.train.total_timesteps
    assert saved >= 256, "the first epoch's checkpoint did not come within its minutes"


def test_temp_files_of_a_killed_save_are_removed_when_the_run_is_opened(tmp_path: Path) -> None:
    train(ENV, _config(tmp_path))
    paths = RunPaths(tmp_path, ENV, "run")
    # What a kill during atomic_write leaves: `.<name>.<random>.tmp` beside the file.
    leftovers = [paths.root / f".{name}.k1ll3d.tmp" for name in ("checkpoint.pt", "config.json")]
    for leftover in leftovers:
        leftover.write_bytes(b"half a file")
    train(ENV, _config(tmp_path, total_timesteps=1536, resume=True))
    assert not any(leftover.exists() for leftover in leftovers)
    assert sorted(p.name for p in paths.root.iterdir()) == sorted(
        [".lock", "checkpoint.pt", "config.json", "config.toml", "defaults.json", "metrics.jsonl"]
    )  # .lock stays: removing it would race with a run taking it


def test_resume_skips_metrics_lines_that_are_no_rows_and_counts_them(tmp_path: Path) -> None:
    train(ENV, _config(tmp_path))
    paths = RunPaths(tmp_path, ENV, "run")
    good = paths.metrics.read_bytes()
    paths.metrics.write_bytes(
        good + b'\xff\xfe not utf-8\n{"step": "abc"}\n[1, 2]\n{"step": 1e400}\n'
    )
    assert read_metrics(paths.metrics).skipped == 4
    with pytest.warns(RuntimeWarning, match=r"metrics.jsonl: skipped 4 line\(s\) that are not"):
        result = train(ENV, _config(tmp_path, total_timesteps=1536, resume=True))
    assert result.global_step == 1536
    found = read_metrics(paths.metrics)
    assert found.skipped == 0
    assert [row["step"] for row in found.rows] == [256 * k for k in range(1, 7)]


class _Opaque:
    """A class the weights-only unpickler refuses (loading it would run this module's code)."""


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (5, r"it holds a int, not a dict"),
        ({"model": {}}, r"it lacks \['config', 'optimizer', 'rng', 'trainer'\]"),
        (
            {"model": {}, "optimizer": {}, "trainer": 3, "rng": {}, "config": {}},
            r"its model, trainer or config entry is not a dict",
        ),
        (
            {
                "model": {},
                "optimizer": {},
                "trainer": {"global_step": "abc"},
                "rng": {},
                "config": {},
            },
            r"its trainer entry lacks an integer global_step and iteration",
        ),
        (_Opaque(), r"it holds objects other than tensors and plain containers"),
    ],
    ids=["int", "missing-keys", "bad-trainer", "bad-step", "pickled-object"],
)
def test_checkpoints_that_are_no_puffer_checkpoints_take_the_corrupt_path(
    tmp_path: Path, content: object, problem: str
) -> None:
    path = tmp_path / RunPaths.CHECKPOINT
    torch.save(content, path)
    with pytest.raises(CheckpointError, match=r"is corrupt or unreadable: " + problem) as error:
        ckpt.load(path)
    assert "weights_only" not in str(error.value)  # no advice to unpickle an unknown file
    assert "\n" not in str(error.value)


def test_a_truncated_checkpoint_names_the_file_in_one_line(tmp_path: Path) -> None:
    train(ENV, _config(tmp_path))
    path = RunPaths(tmp_path, ENV, "run").checkpoint
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(CheckpointError, match=r"checkpoint .*checkpoint.pt is corrupt") as error:
        train(ENV, _config(tmp_path, total_timesteps=1536, resume=True))
    assert "\n" not in str(error.value)
