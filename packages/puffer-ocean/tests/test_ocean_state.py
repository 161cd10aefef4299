"""save_state/load_state continue every C env bit-exactly: step N, save, step M recording
everything, load, step the same M again, and every array (and every log) must match."""

from __future__ import annotations

import numpy as np
import pytest

import puffer.core
from puffer.core import APIUsageError
from puffer.ocean import _ocean

CONFIGS = {
    "snake": {"width": 24, "height": 24, "num_snakes": 4, "num_food": 16},
    "pong": {"max_score": 1},
    "trash_pickup": {"max_steps": 40},
    "checkers": {"max_steps": 40},
    "freeway": {"frameskip": 60},
    "blastar": {"max_steps": 40},
    "robocode": {"max_steps": 40},
    "rocket_lander": {"max_steps": 40},
    "rware": {"map_choice": 3, "num_agents": 64, "num_requested_shelves": 64},
    "terraform": {"reset_frequency": 40},
    "tower_climb": {"num_agents": 8, "num_maps": 4},
    "enduro": {"max_steps": 40},
}
BEFORE, AFTER = 150, 150


def random_actions(env, rng: np.random.Generator) -> np.ndarray:
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(0, space.n, env.actions.shape, dtype=np.int32)
    if hasattr(space, "nvec"):
        return rng.integers(0, space.nvec, env.actions.shape, dtype=np.int32)
    return rng.uniform(-1, 1, env.actions.shape).astype(np.float32)


def record(env, actions: list[np.ndarray]) -> list:
    out = []
    for a in actions:
        obs, rewards, terminals, truncations, infos = env.step(a)
        out += [obs.copy(), rewards.copy(), terminals.copy(), truncations.copy(), infos]
    return out


@pytest.mark.parametrize("name", _ocean.ENVS)
def test_ocean_load_state_continues_bit_exactly(name: str) -> None:
    env = puffer.core.make(name, num_envs=5, log_interval=7, **CONFIGS.get(name, {}))
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    for _ in range(BEFORE):
        env.step(random_actions(env, rng))
    state = env.save_state()
    assert state.dtype == np.uint8 and state.ndim == 1
    assert state.size == env._c.state_size + 8
    actions = [random_actions(env, rng) for _ in range(AFTER)]
    first = record(env, actions)
    env.load_state(state)
    second = record(env, actions)
    for a, b in zip(first, second, strict=True):
        if isinstance(a, list):
            assert a == b
        else:
            np.testing.assert_array_equal(a, b)
    assert any(step for step in first[4::5]), f"{name}: no log in {AFTER} steps"
    # A fresh env of the same name, num_envs and config continues the same way.
    fresh = puffer.core.make(name, num_envs=5, log_interval=7, **CONFIGS.get(name, {}))
    fresh.load_state(state)
    third = record(fresh, actions)
    for a, b in zip(first, third, strict=True):
        if not isinstance(a, list):
            np.testing.assert_array_equal(a, b)
    env.close()
    fresh.close()


def test_ocean_load_state_refuses_another_env_and_changes_nothing() -> None:
    env = puffer.core.make("squared", num_envs=2)
    env.reset(seed=0)
    state = env.save_state()
    with pytest.raises(APIUsageError, match=r"num_envs=2.*this env has num_envs=3"):
        puffer.core.make("squared", num_envs=3).load_state(state)
    with pytest.raises(APIUsageError, match="state of 'squared'"):
        puffer.core.make("cartpole", num_envs=2).load_state(state)
    other = puffer.core.make("squared", num_envs=2, max_steps=50)
    other.reset(seed=1)
    before = other.save_state()
    with pytest.raises(APIUsageError, match="saved with max_steps=33, this env has 50"):
        other.load_state(state)
    np.testing.assert_array_equal(other.save_state(), before)
    with pytest.raises(APIUsageError, match="1-D uint8"):
        env.load_state(state.astype(np.int16))
    with pytest.raises(APIUsageError, match="format version"):
        env.load_state(np.zeros_like(state))
    env.close()
