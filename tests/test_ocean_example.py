"""The puffer-ocean README's example env, `corridor`, added as the README says (a header and one
line in csrc/envs.h): it is registered, steps, renders, passes the sanitizer harness and trains."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

import puffer.core
import puffer.ocean
from puffer.train import Config, TrainConfig, VecConfig, train

OCEAN = Path(puffer.ocean.__file__).resolve().parents[3]


def test_ocean_example_env_is_registered_and_steps() -> None:
    assert "corridor" in puffer.core.registered_envs()  # what `puffer list` shows
    env = puffer.core.make("corridor", num_envs=4)
    assert env.single_observation_space.shape == (9,) and env.config.max_steps == 32
    obs, _ = env.reset(seed=0)
    assert ((obs == 1).sum(axis=1) == 1).all() and ((obs == 2).sum(axis=1) == 1).all()
    # Walk toward the goal: each episode ends in 4 steps with reward 1.
    goal_right = obs[:, -1] == 2
    for _ in range(4):
        _, rewards, terminals, truncations, _ = env.step(goal_right.astype(np.int32))
    assert (rewards == 1).all() and terminals.all() and not truncations.any()
    frame = env.render()
    assert frame.shape == (32, 288, 3) and frame.dtype == np.uint8 and frame.any()
    env.close()


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler on PATH")
def test_ocean_example_env_passes_the_sanitizer_harness(tmp_path: Path) -> None:
    path = OCEAN / "tests" / "test_ocean_sanitize.py"
    spec = importlib.util.spec_from_file_location("ocean_sanitize", path)
    sanitize = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sanitize)
    sanitize.build_harness("corridor", tmp_path / "corridor")
    assert "episodes=" in sanitize.run_harness(tmp_path / "corridor")


def test_ocean_example_env_trains(tmp_path: Path) -> None:
    config = Config(
        train=TrainConfig(
            total_timesteps=49152,
            horizon=16,
            minibatch_size=512,
            device="cpu",
            data_dir=str(tmp_path),
            seed=1,
        ),
        vec=VecConfig(backend="serial", num_instances=64),
    )
    result = train("corridor", config)
    # Random actions reach the goal in 60% of episodes, in 22 steps on average (measured over
    # 1,024 envs); the shortest path is 4 steps. With PuffeRL's defaults seeds 1 and 2 end at
    # 4.4 and 4.2 steps (at 16,384 steps, 0.87 of episodes reach it: Muon's biases move by
    # lr times their gradient, slower at first than AdamW's did).
    assert result.recent["score"] > 0.95 and result.recent["episode_length"] < 6, result.recent
