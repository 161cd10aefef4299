"""Run directories, atomic checkpoints, exact resume after a kill, clear errors."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from puffer.core import PufferEnv, env_creator, make
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
from puffer.train.env_buffers import EnvBuffers
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
        first.collect()
        first.train()
    path = first.save_checkpoint()
    assert path == tmp_path / RunPaths.CHECKPOINT
    assert [p.name for p in tmp_path.iterdir()] == [RunPaths.CHECKPOINT]  # no temp files left
    expected_draw = torch.rand(3)

    second = _trainer(config)
    second.load_state_dict(ckpt.load(path))
    assert (
        (second.global_step, second.iteration) == (first.global_step, first.iteration) == (512, 2)
    )
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
    assert result.iterations == config.train.total_timesteps // 256
    rows = read_jsonl(metrics)
    steps = [row["step"] for row in rows]
    assert steps[-1] == config.train.total_timesteps
    late_return = result.recent["episode_return"]
    assert late_return > 2 * early_return, (early_return, late_return)


class WalkEnv(PufferEnv):
    """A noisy 1-D walk per agent, noise and episode starts from the env's own generator;
    `seeds` records every reset seed. No `save_state`: a Python env."""

    def __init__(self, num_agents: int = 8, buf=None):
        self.num_agents = num_agents
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float32)
        self.single_action_space = spaces.Discrete(3)
        self.seeds: list[int | None] = []
        super().__init__(buf)

    def _reset(self, seed):
        self.seeds.append(seed)
        self.rng = np.random.default_rng(seed)
        self.pos = self.rng.normal(size=self.num_agents).astype(np.float32)
        self.t = np.zeros(self.num_agents, dtype=np.int64)
        self._observe()
        return []

    def _step(self):
        self.pos += 0.2 * (self.actions - 1) + 0.1 * self.rng.normal(size=self.num_agents)
        self.t += 1
        self.rewards[:] = -np.abs(self.pos)
        self.terminals[:] = np.abs(self.pos) > 2
        self.truncations[:] = (self.t >= 12) & ~self.terminals
        done = self.terminals | self.truncations
        self.pos[done] = self.rng.normal(size=int(done.sum()))
        self.t[done] = 0
        self._observe()
        return [{"episode_return": 1.0}] if done.any() else []

    def _observe(self):
        self.observations[:, 0] = self.pos
        self.observations[:, 1] = self.t / 12


class SavableWalkEnv(WalkEnv):
    """WalkEnv with the native envs' `save_state()` / `load_state()` interface."""

    def save_state(self) -> np.ndarray:
        state = (self.rng.bit_generator.state, self.pos.copy(), self.t.copy())
        return np.frombuffer(pickle.dumps(state), dtype=np.uint8)

    def load_state(self, state: np.ndarray) -> None:
        self.rng.bit_generator.state, self.pos[:], self.t[:] = pickle.loads(state.tobytes())


def _default_trainer(make_env, recurrent: str, run_dir: Path) -> PuffeRL:
    """The default trainer (Muon, prioritized replay, LR and beta annealing), small sizes."""
    env = make_env()
    config = Config(
        train=TrainConfig(
            total_timesteps=4 * env.num_agents * 16,
            horizon=8,
            batch_size=env.num_agents * 16,
            minibatch_size=env.num_agents * 8,
            device="cpu",
            seed=5,
        ),
        policy=PolicyConfig(hidden_size=16, recurrent=recurrent),
    )
    torch.manual_seed(0)
    return PuffeRL(config, env, make_policy(config.policy, env), run_dir=run_dir)


def _ocean_cartpole_with_state():
    env = make(OCEAN, num_envs=16)
    if not hasattr(env, "save_state"):
        env.close()
        pytest.skip("Ocean envs have no save_state() yet (the C env state interface)")
    return env


def _ocean_cartpole_in_buffers() -> EnvBuffers:
    """The same 16 envs as two `vec.num_buffers` buffers of 8, stepped on threads."""
    return EnvBuffers(env_creator(OCEAN), 2, {"num_envs": 16}, OCEAN)


@pytest.mark.parametrize("recurrent", ["none", "mingru"])
@pytest.mark.parametrize(
    "make_env",
    [SavableWalkEnv, _ocean_cartpole_with_state, _ocean_cartpole_in_buffers],
    ids=["python-savable", "ocean", "ocean-buffers"],
)
def test_four_epochs_equal_two_then_resume_then_two(tmp_path: Path, make_env, recurrent) -> None:
    """With the env's own state saved, resuming is bit-exact: parameters, optimizer moments."""
    straight = _default_trainer(make_env, recurrent, tmp_path / "straight")
    for _ in range(4):
        straight.collect()
        straight.train()
    first = _default_trainer(make_env, recurrent, tmp_path / "resumed")
    for _ in range(2):
        first.collect()
        first.train()
    path = first.save_checkpoint()
    first.vecenv.close()
    torch.rand(7)  # whatever the process draws in between does not matter
    second = _default_trainer(make_env, recurrent, tmp_path / "resumed")
    second.load_state_dict(ckpt.load(path))
    for _ in range(2):
        second.collect()
        second.train()
    assert second.global_step == straight.global_step
    for a, b in zip(straight.policy.parameters(), second.policy.parameters(), strict=True):
        assert torch.equal(a, b)
    a, b = straight.optimizer.state_dict(), second.optimizer.state_dict()
    assert a["param_groups"] == b["param_groups"]
    for key, values in a["state"].items():
        for name, value in values.items():
            assert torch.equal(value, b["state"][key][name]), name
    straight.vecenv.close()
    second.vecenv.close()


def test_python_env_resume_reseeds_from_the_seed_stream(tmp_path: Path) -> None:
    """Without env state the envs restart on a fresh seed of the run's stream (not the first
    seed again), and the held reply is not reused."""
    first = _default_trainer(WalkEnv, "none", tmp_path / "a")
    first.collect()
    first.train()
    path = first.save_checkpoint()
    second = _default_trainer(WalkEnv, "none", tmp_path / "b")
    second.load_state_dict(ckpt.load(path))
    second.collect()
    second.train()
    second_path = second.save_checkpoint()
    third = _default_trainer(WalkEnv, "none", tmp_path / "c")
    third.load_state_dict(ckpt.load(path))
    third.collect()
    seeds = [t.vecenv.seeds for t in (first, second, third)]
    assert seeds[0] == [5]
    assert seeds[1] == seeds[2] and seeds[1][0] != 5  # the second seed of the stream
    fourth = _default_trainer(WalkEnv, "none", tmp_path / "d")
    fourth.load_state_dict(ckpt.load(second_path))
    fourth.collect()
    assert fourth.vecenv.seeds[0] not in (5, seeds[1][0])  # the third
    assert second.global_step == 2 * second.sizes.batch_size


def test_run_paths_spell_the_layout(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path, "ALE/Pong-v5", "r1")
    assert paths.root == tmp_path / "ALE_Pong-v5" / "r1"
    assert (paths.config.name, paths.checkpoint.name, paths.metrics.name) == (
        "config.json",
        "checkpoint.pt",
        "metrics.jsonl",
    )
    assert RunPaths.latest(tmp_path, "ALE/Pong-v5") is None
    for run_id in ("old", "new"):
        other = RunPaths(tmp_path, "ALE/Pong-v5", run_id)
        other.root.mkdir(parents=True)
        other.checkpoint.write_bytes(b"")
        time.sleep(0.01)
    assert RunPaths.latest(tmp_path, "ALE/Pong-v5") == RunPaths(tmp_path, "ALE/Pong-v5", "new")
    assert RunPaths.sweep_dir(tmp_path, "a/b", "s") == tmp_path / "a_b" / "sweep-s"


def test_a_checkpoint_saved_before_the_vec_renames_still_loads(tmp_path: Path) -> None:
    """A run trained when [vec] said num_envs/batch_size loads under the new names: the old
    names are refused where a user types them, never in our own saved record."""
    config = _config(tmp_path)
    config.env = {}
    trainer = _trainer(config, tmp_path)
    path = trainer.save_checkpoint()
    trainer.close()
    state = torch.load(path, weights_only=True)
    vec = state["config"]["vec"]
    vec["num_envs"], vec["batch_size"] = vec.pop("num_instances"), vec.pop("instances_per_recv")
    torch.save(state, path)

    saved = ckpt.load_run_config(path)
    assert (saved.vec.num_instances, saved.vec.instances_per_recv) == (
        vec["num_envs"],
        vec["batch_size"],
    )
    assert ckpt.load(path)["config"]["vec"]["num_instances"] == vec["num_envs"]
