"""The installed `puffer` command in real subprocesses: train -> eval GIF, Ctrl-C -> resume,
sweep, errors."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from puffer.train.metrics import read_jsonl

# Real `puffer` subprocesses that train, sweep and resume: minutes on 2 cores, so scheduled first.
pytestmark = pytest.mark.slow

# The console script when installed, else the module (same code path: puffer.cli.main:main).
_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]

# A few seconds of CPU training: enough to write a run directory and a checkpoint.
TINY = [
    "--train.total-timesteps", "2048",
    "--train.horizon", "16",
    "--train.minibatch-size", "128",
    "--train.device", "cpu",
    "--env.num-envs", "8",
]  # fmt: skip


def puffer(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("DISPLAY", None)  # headless: eval must fall back to a video file
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.run(
        [*PUFFER, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_train_then_eval_latest_writes_a_moving_gif(tmp_path: Path) -> None:
    trained = puffer("train", "breakout", "--no-dashboard", *TINY, cwd=tmp_path)
    assert trained.returncode == 0, trained.stdout + trained.stderr
    checkpoints = list((tmp_path / "experiments" / "breakout").glob("*/checkpoint.pt"))
    assert len(checkpoints) == 1
    assert f"model: {checkpoints[0].relative_to(tmp_path)}" in trained.stdout
    assert (checkpoints[0].parent / "config.toml").is_file()

    gif = tmp_path / "breakout.gif"
    evaluated = puffer(
        "eval", "breakout", "--load-model-path", "latest", "--video", str(gif),
        "--max-steps", "120", "--fps", "15", cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert f"video: {gif}" in evaluated.stdout
    frames = iio.imread(gif, index=None)
    assert frames.ndim == 4 and frames.shape[-1] == 3 and frames.dtype == np.uint8
    assert len(frames) > 10
    # Non-blank: every frame has more than one colour. Changing: the ball moves.
    assert all(frame.reshape(-1, 3).std(axis=0).max() > 0 for frame in frames)
    changes = np.abs(np.diff(frames.astype(np.int16), axis=0)).sum(axis=(1, 2, 3))
    assert (changes > 0).sum() >= len(frames) // 2


def test_errors_exit_nonzero_with_a_suggestion(tmp_path: Path) -> None:
    typo = puffer("train", "breakout", "--train.learnin-rate", "1", cwd=tmp_path)
    assert typo.returncode == 2
    assert "did you mean --train.learning-rate" in typo.stderr
    assert not (tmp_path / "experiments").exists()
    # typer's own usage errors take the same one-line form instead of a boxed panel
    usage = puffer("eval", "breakout", "--episodes", "0", cwd=tmp_path)
    assert usage.returncode == 2
    assert usage.stderr.startswith("error: Invalid value for '--episodes'")
    assert usage.stderr.count("\n") == 1 and "Traceback" not in usage.stderr


# Without a GPU, "cuda" is the case; with one, a device index no machine has.
_NO_SUCH_DEVICE = "cuda:99" if torch.cuda.is_available() else "cuda"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--train.learning-rate", "fast"], "--train.learning-rate expects a float, got 'fast'"),
        (["--train.total-timesteps", "-5"], "--train.total-timesteps is -5; set it to an int >= 1"),
        (["--train.gamma", "nan"], "--train.gamma is nan; set it to a finite float in [0, 1]"),
        (["--train.device", _NO_SUCH_DEVICE], f"train.device is '{_NO_SUCH_DEVICE}' but"),
        (["--train.data-dir", "{blocker}/runs"], "is not a directory; point it at a writable"),
        (["--config", "{bad_toml}"], "unknown section [trainer] in"),
    ],
    ids=["type", "range", "nan", "device", "data-dir", "brackets"],
)
def test_bad_input_is_one_line_exit_2_and_nothing_on_disk(
    args: list[str], expected: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("inputs")
    blocker = elsewhere / "a-file"
    blocker.write_text("not a directory")
    bad_toml = elsewhere / "bad.toml"
    bad_toml.write_text("[trainer]\ngamma = 0.9\n")
    args = [a.format(blocker=blocker, bad_toml=bad_toml) for a in args]
    done = puffer("train", "squared", "--no-dashboard", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert list(tmp_path.iterdir()) == []
    assert sorted(p.name for p in elsewhere.iterdir()) == ["a-file", "bad.toml"]


def test_list_in_a_pipe(tmp_path: Path) -> None:
    listed = puffer("list", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    for env in ("squared", "cartpole", "breakout"):
        assert env in listed.stdout


def test_sweep_runs_end_to_end_and_logs_every_run(tmp_path: Path) -> None:
    done = puffer(
        "sweep", "cartpole", "--name", "ci", "--sweep.max-runs", "8", "--train.update-epochs",
        "1", *TINY, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    store = tmp_path / "experiments" / "cartpole" / "sweep-ci" / "sweep.jsonl"
    lines = [json.loads(line) for line in store.read_text().splitlines()]
    runs = [line for line in lines if "run_id" in line]  # the first line is the store header
    assert len(runs) == 8
    for run in runs:
        assert run["status"] == "ok", run["error"]
        assert np.isfinite(run["score"]) and run["cost"] > 0
        assert set(run["params"]) >= {"train.learning_rate", "train.gamma"}
        assert run["curve"], "every run reports its learning curve"
    assert "best runs by score" in done.stdout
    assert "8 runs, 0 failed" in done.stdout


def test_ctrl_c_checkpoints_and_the_printed_command_resumes(tmp_path: Path) -> None:
    """SIGINT mid-run: exit 130, a loadable checkpoint, a resume command that finishes the
    run, and every epoch's metrics row exactly once."""
    total, batch = 300 * 256, 256  # cartpole.toml's batch
    args = ["--train.total-timesteps", str(total), "--train.update-epochs", "2",
            "--train.device", "cpu", "--train.checkpoint-interval", "1000"]  # fmt: skip
    env = {**os.environ, "COLUMNS": "400"}
    child = subprocess.Popen(
        [*PUFFER, "train", "cartpole", "--no-dashboard", *args],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        metrics = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None and len(metrics) < 3:
            metrics = list(tmp_path.glob("experiments/cartpole/*/metrics.jsonl"))
            metrics = read_jsonl(metrics[0]) if metrics else []
            time.sleep(0.05)
        assert child.poll() is None, "the run finished before it could be interrupted"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
        child.communicate()
    assert child.returncode == 130, out + err
    assert "stopped by SIGINT" in out, out + err
    checkpoint = tmp_path / out.split("checkpoint: ")[1].split()[0]
    stopped_at = torch.load(checkpoint, weights_only=True)["trainer"]["global_step"]
    assert 0 < stopped_at < total
    # Nothing after the checkpoint was logged: the last row is the checkpointed epoch.
    rows = read_jsonl(checkpoint.parent / "metrics.jsonl")
    assert rows[-1]["step"] == stopped_at

    command = shlex.split(out.split("resume it: ")[1].strip())
    assert command[:3] == ["puffer", "train", "cartpole"]
    resumed = subprocess.run(
        [*PUFFER, *command[1:], "--no-dashboard"], cwd=tmp_path, capture_output=True,
        text=True, timeout=300, env=env,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    steps = [row["step"] for row in read_jsonl(checkpoint.parent / "metrics.jsonl")]
    assert steps == list(range(batch, total + 1, batch))
