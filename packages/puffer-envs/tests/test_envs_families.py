"""Every family that installs here: make, reset, 100 vectorized steps, render, a short train."""

from __future__ import annotations

import numpy as np
import pytest

import puffer.vector
from puffer.core import make
from puffer.envs import FAMILIES
from puffer.train import Config, PolicyConfig, TrainConfig, VecConfig, train

# One env per family, with kwargs that keep it small, and the encoder its TOML uses.
SMOKE = {
    "atari-breakout": ({"num_envs": 2, "num_threads": 1}, "nature_cnn"),
    "minatar-breakout": ({"num_envs": 2}, "mlp"),
    "minigrid-doorkey-5x5": ({"num_envs": 2}, "mlp"),
    "crafter": ({"num_envs": 1}, "nature_cnn"),  # a world takes ~1 s to generate
    "butterfly-kaz": ({}, "mlp"),
    "butterfly-pistonball": ({"n_pistons": 4}, "nature_cnn"),
    "nethack-score": ({"num_envs": 2}, "puffer.envs.nethack_encoder:NetHackEncoder"),
    "magent-battle": ({"map_size": 15}, "mlp"),
    "vizdoom-basic": ({"num_envs": 2}, "nature_cnn"),
}


def _random_actions(env, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, env.single_action_space.n, env.num_agents).astype(np.int32)


def test_every_family_installs_here() -> None:
    # The workspace installs puffer-envs[all]: no family may be skipped for a missing library.
    assert {name: family.missing() for name, family in FAMILIES.items()} == {
        name: [] for name in FAMILIES
    }
    # Procgen's games run in an interpreter of their own: test_envs_procgen.py makes, steps,
    # renders and trains them there, against the raw game.
    assert {name.split("-")[0] for name in SMOKE} >= set(FAMILIES) - {"butterfly", "procgen"}


@pytest.mark.parametrize("name", SMOKE)
def test_make_reset_step_in_space(name: str) -> None:
    kwargs, _ = SMOKE[name]
    env = make(name, render_mode="rgb_array", **kwargs)
    space = env.single_observation_space
    obs, _ = env.reset(seed=1)
    assert obs.shape == (env.num_agents, *space.shape) and obs.dtype == space.dtype
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, rewards, *_ = env.step(_random_actions(env, rng))
        for row in obs[env.masks]:  # absent agents' padded rows are no observations
            assert space.contains(row)
        assert rewards.dtype == np.float32 and np.isfinite(rewards).all()
    frame = env.render()
    assert frame.ndim == 3 and frame.shape[2] == 3 and frame.dtype == np.uint8
    env.close()


@pytest.mark.parametrize("name", SMOKE)
def test_same_seed_same_rollout(name: str) -> None:
    kwargs, _ = SMOKE[name]
    runs = []
    for _ in range(2):
        env = make(name, **kwargs)
        obs, _ = env.reset(seed=3)
        rng = np.random.default_rng(0)
        for _ in range(30):
            obs, rewards, *_ = env.step(_random_actions(env, rng))
        runs.append((obs.copy(), rewards.copy()))
        env.close()
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])


@pytest.mark.parametrize("name", SMOKE)
def test_100_vectorized_steps(name: str) -> None:
    kwargs, _ = SMOKE[name]
    vecenv = puffer.vector.make(name, num_instances=2, backend="serial", seed=0, env_kwargs=kwargs)
    try:
        obs, _ = vecenv.reset(seed=0)
        rng = np.random.default_rng(0)
        n = vecenv.num_agents
        for _ in range(100):
            actions = rng.integers(0, vecenv.single_action_space.n, n).astype(np.int32)
            obs, rewards, _, _, infos = vecenv.step(actions)
        assert obs.shape[0] == n and rewards.shape == (n,)
        for info in infos:
            assert np.isfinite(info["episode_return"])
    finally:
        vecenv.close()


@pytest.mark.parametrize("name", SMOKE)
def test_short_train(name: str, tmp_path) -> None:
    kwargs, encoder = SMOKE[name]
    config = Config(
        train=TrainConfig(
            total_timesteps=256,
            horizon=16,
            minibatch_size=16,  # one row's horizon: divides every env's agent count
            optimizer="adam",
            learning_rate=3e-4,
            device="cpu",
            data_dir=str(tmp_path),
            checkpoint_interval=0,
        ),
        policy=PolicyConfig(encoder=encoder, hidden_size=32, cnn_channels=8),
        vec=VecConfig(backend="native"),
        env=kwargs,
    )
    result = train(name, config)
    assert result.global_step >= 256
    assert all(np.isfinite(v) for v in result.metrics.values() if isinstance(v, float))
