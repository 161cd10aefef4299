"""Run directories, atomic checkpoints, exact resume after a kill, clear errors."""

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

from puffer.core import make
from puffer.train import (
    CheckpointError,
    Config,
    PolicyConfig,
    PuffeRL,
    TrainConfig,
    make_policy,
    train,
)
from puffer.train import checkpoint as ckpt
from puffer.train.metrics import read_jsonl
from puffer.train.paths import RunPaths

ENV = "gym-CartPole-v1"
OCEAN = "cartpole"  # the C env: fast enough to learn within the test budget


def _config(data_dir: Path, total: int = 30_720, **train_kwargs) -> Config:
    train_config = TrainConfig(
        total_timesteps=total,
        horizon=32,
        batch_size=256,
        minibatch_size=256,
        update_epochs=20,
        gamma=0.99,
        gae_lambda=0.95,
        ent_coef=0.0,
        optimizer="adam",
        learning_rate=0.002,
        vf_coef=0.5,
        vf_clip_coef=100.0,
        max_grad_norm=0.5,
        prio_alpha=0.0,
        device="cpu",
        seed=3,
        data_dir=str(data_dir),
        run_id="run",
        checkpoint_interval=1,
    )
    for key, value in train_kwargs.items():
        setattr(train_config, key, value)
    return Config(
        train=train_config,
        policy=PolicyConfig(hidden_size=64, num_layers=1),
        env={"num_envs": 8, "log_interval": 1},
    )


def _trainer(config: Config, run_dir: Path | None = None) -> PuffeRL:
    env = make(ENV)
    torch.manual_seed(0)
    return PuffeRL(config, env, make_policy(config.policy, env), run_dir=run_dir)


def test_checkpoint_restores_model_optimizer_counters_and_rng(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.env = {}
    first = _trainer(config, tmp_path)
    for _ in range(2):
        first.evaluate()
        first.train()
    path = first.save_checkpoint()
    assert path == tmp_path / RunPaths.CHECKPOINT
    assert [p.name for p in tmp_path.iterdir()] == [RunPaths.CHECKPOINT]  # no temp files left
    expected_draw = torch.rand(3)

    second = _trainer(config)
    second.load_state_dict(ckpt.load(path))
    assert (second.global_step, second.epoch) == (first.global_step, first.epoch) == (512, 2)
    for a, b in zip(first.policy.parameters(), second.policy.parameters(), strict=True):
        assert torch.equal(a, b)
    saved, restored = first.optimizer.state_dict(), second.optimizer.state_dict()
    assert restored["state"], "optimizer moments were not restored"
    for key, moments in saved["state"].items():
        for name, value in moments.items():
            assert torch.equal(value, restored["state"][key][name]), name
    # The torch RNG continues from where the saved run stood.
    assert torch.equal(torch.rand(3), expected_draw)


def test_a_seed_trains_the_same_whatever_the_process_ran_before(tmp_path: Path) -> None:
    def run(directory: str, threads_before: int) -> list[torch.Tensor]:
        torch.set_num_threads(threads_before)
        config = _config(tmp_path / directory, total=512)
        return list(train(OCEAN, config).policy.parameters())

    first, second = run("a", threads_before=2), run("b", threads_before=1)
    assert all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


def test_corrupt_and_mismatched_checkpoints_raise(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config.env = {}
    trainer = _trainer(config, tmp_path)
    path = trainer.save_checkpoint()
    other = _config(tmp_path)
    other.env = {}
    other.policy.hidden_size = 32
    with pytest.raises(CheckpointError, match=r"policy.hidden_size: checkpoint 64, now 32"):
        _trainer(other).load_state_dict(ckpt.load(path))
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="corrupt or unreadable"):
        ckpt.load(path)
    with pytest.raises(CheckpointError, match="no checkpoint at"):
        ckpt.load(tmp_path / "missing.pt")
    resume = _config(tmp_path / "elsewhere", resume=True)
    with pytest.raises(CheckpointError, match="cannot resume"):
        train(OCEAN, resume)


def test_killed_run_resumes_to_the_same_step_count_and_keeps_learning(tmp_path: Path) -> None:
    config = _config(tmp_path)
    script = (
        "import json, sys\n"
        "from puffer.train import Config, train\n"
        f"train({OCEAN!r}, Config.from_dict(json.loads(sys.argv[1])))\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, json.dumps(config.to_dict())])
    run_dir = tmp_path / OCEAN / "run"
    metrics = run_dir / "metrics.jsonl"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and child.poll() is None:
            if metrics.exists() and len(read_jsonl(metrics)) >= 40:
                break
            time.sleep(0.05)
        assert child.poll() is None, "the run finished before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    killed_at = ckpt.load(run_dir / RunPaths.CHECKPOINT)["trainer"]["global_step"]
    assert 0 < killed_at < config.train.total_timesteps
    early = read_jsonl(metrics)[:10]
    early_return = sum(r.get("environment/episode_return") or 0 for r in early) / len(early)

    config.train.resume = True
    result = train(OCEAN, config)
    assert result.global_step == config.train.total_timesteps
    assert result.epochs == config.train.total_timesteps // 256
    rows = read_jsonl(metrics)
    steps = [row["step"] for row in rows]
    assert steps[-1] == config.train.total_timesteps
    late_return = result.recent["episode_return"]
    assert late_return > 2 * early_return, (early_return, late_return)
