"""The env trio for every C env: determinism, seed sensitivity, bounds; plus the
buffer contract (every step writes rewards and flags) and registration through make()."""

from __future__ import annotations

from importlib.metadata import version

import numpy as np
import pytest

import puffer.core
from puffer.core import APIUsageError, Buffer
from puffer.ocean import OceanEnv, _ocean

# Names registered in pyproject.toml by this package's C envs, with the config used in tests.
ENVS = {
    "squared": {},
    "cartpole": {},
    "cartpole_continuous": {},
    "pong": {"max_score": 3},
    "breakout": {},
    "snake": {"width": 24, "height": 24, "num_snakes": 4, "num_food": 16},
    "target": {},
    "connect4": {},
    "g2048": {},
    "tetris": {},
    "memory": {"delay": 3},
}
STEPS = 300


def random_actions(env: OceanEnv, rng: np.random.Generator) -> np.ndarray:
    space = env.single_action_space
    if hasattr(space, "n"):
        return rng.integers(0, space.n, env.actions.shape, dtype=np.int32)
    if hasattr(space, "nvec"):
        return rng.integers(0, space.nvec, env.actions.shape, dtype=np.int32)
    return rng.uniform(space.low, space.high, env.actions.shape).astype(np.float32)


def rollout(name: str, seed: int, steps: int = STEPS, num_envs: int = 4) -> list[np.ndarray]:
    env = puffer.core.make(name, num_envs=num_envs, **ENVS[name])
    rng = np.random.default_rng(123)
    obs, _ = env.reset(seed=seed)
    frames = [obs.copy()]
    for _ in range(steps):
        obs, rewards, terminals, truncations, _ = env.step(random_actions(env, rng))
        frames += [obs.copy(), rewards.copy(), terminals.copy(), truncations.copy()]
    env.close()
    return frames


@pytest.mark.parametrize("name", ENVS)
def test_ocean_same_seed_same_trajectory(name: str) -> None:
    first, second = rollout(name, seed=7), rollout(name, seed=7)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ENVS)
def test_ocean_different_seeds_differ(name: str) -> None:
    first, second = rollout(name, seed=7), rollout(name, seed=8)
    assert any(not np.array_equal(a, b) for a, b in zip(first, second, strict=True))


@pytest.mark.parametrize("name", ENVS)
def test_ocean_observations_in_bounds_and_flags_written(name: str) -> None:
    env = puffer.core.make(name, num_envs=8, **ENVS[name])
    space = env.single_observation_space
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    episodes = 0
    for _ in range(2000):
        # Poison the outputs: a step that forgets to write them leaves NaN or the byte 2.
        env.rewards[:] = np.nan
        env.terminals.view(np.uint8)[:] = 2
        env.truncations.view(np.uint8)[:] = 2
        obs, rewards, terminals, truncations, _ = env.step(random_actions(env, rng))
        assert np.isfinite(rewards).all()
        assert np.isin(terminals.view(np.uint8), (0, 1)).all()
        assert np.isin(truncations.view(np.uint8), (0, 1)).all()
        assert (obs >= space.low).all() and (obs <= space.high).all(), obs
        episodes += int(terminals.sum() + truncations.sum())
    # PufferLib's target never ends an episode (its log counts goals instead).
    assert episodes > 0 or name == "target", f"{name}: no episode ended in 2000 random steps"
    env.close()


@pytest.mark.parametrize("name", ENVS)
def test_ocean_make_and_logs(name: str) -> None:
    env = puffer.core.make(name, num_envs=16, log_interval=50, **ENVS[name])
    assert isinstance(env, OceanEnv)
    assert env.num_agents == 16 * env._c.num_agents // env._c.num_envs
    assert env.observations.shape == (env.num_agents, *env.single_observation_space.shape)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    logs = []
    for _ in range(2000):
        logs += env.step(random_actions(env, rng))[-1]
    assert logs, f"{name}: no episode log in 2000 steps"
    for log in logs:
        assert log["n"] >= 1 and "episode_length" in log and "episode_return" in log
        assert all(isinstance(v, float) for v in log.values())
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    env.close()
    env.close()


@pytest.mark.parametrize("name", ENVS)
def test_ocean_threads_match_serial(name: str) -> None:
    results = []
    for threads in (1, 2, 3):  # 3 threads on 2 cores: oversubscribed on purpose
        env = puffer.core.make(name, num_envs=256, num_threads=threads, **ENVS[name])
        rng = np.random.default_rng(5)
        env.reset(seed=11)
        for _ in range(100):
            env.step(random_actions(env, rng))
        results.append(env.observations.copy())
        env.close()
    for result in results[1:]:
        np.testing.assert_array_equal(results[0], result)


def test_ocean_writes_into_given_buffer_rows() -> None:
    big = Buffer.allocate(
        12, puffer.ocean.Squared.single_observation_space, puffer.ocean.Squared.single_action_space
    )
    env = puffer.ocean.Squared(num_envs=4, buf=big.rows(4, 8))
    env.reset(seed=0)
    assert (big.observations[4:8] != 0).any() and (big.observations[:4] == 0).all()
    env.close()


def test_ocean_errors_name_the_fix() -> None:
    with pytest.raises(
        APIUsageError, match="unknown config key 'max_step'; did you mean 'max_steps'"
    ):
        puffer.ocean.Squared(max_step=3)
    with pytest.raises(APIUsageError, match="must be an int"):
        puffer.ocean.Squared(max_steps=2.5)
    with pytest.raises(APIUsageError, match="num_envs is 0"):
        puffer.ocean.Squared(num_envs=0)
    env = puffer.ocean.Squared()
    env.close()
    with pytest.raises(APIUsageError, match="after close"):
        env.render()
    with pytest.raises(APIUsageError, match="after close"):
        env._c.step()


def test_ocean_binding_refuses_bad_arrays() -> None:
    buf = Buffer.allocate(
        2, puffer.ocean.Squared.single_observation_space, puffer.ocean.Squared.single_action_space
    )
    args = [buf.observations, buf.actions, buf.rewards, buf.terminals, buf.truncations]
    with pytest.raises(APIUsageError, match="observations has 2 rows, expected 3"):
        _ocean.squared(3, {}).bind(*args)
    bad = [buf.observations.astype(np.float32), *args[1:]]
    with pytest.raises(APIUsageError, match="observations has dtype float32, expected uint8"):
        _ocean.squared(2, {}).bind(*bad)
    bad = [np.zeros((2, 242), np.uint8)[:, ::2], *args[1:]]
    with pytest.raises(APIUsageError, match="not C-contiguous"):
        _ocean.squared(2, {}).bind(*bad)
    bad = [np.zeros((2, 120), np.uint8), *args[1:]]
    with pytest.raises(APIUsageError, match="rows hold 120 observation and 1 action elements"):
        _ocean.squared(2, {}).bind(*bad)
    with pytest.raises(APIUsageError, match="step\\(\\) called before bind"):
        _ocean.squared(2, {}).step()


def test_ocean_version_matches_metadata() -> None:
    assert _ocean.__version__ == puffer.ocean.__version__ == version("puffer-ocean")
    assert set(ENVS) <= set(_ocean.ENVS)


def test_ocean_stub_matches_module() -> None:
    import ast
    from pathlib import Path

    stub = Path(puffer.ocean.__file__).with_name("_ocean.pyi")
    tree = ast.parse(stub.read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    assert set(classes) == {"_VecEnv"}  # the env classes are reached through ENVS
    members = {
        node.name if isinstance(node, ast.FunctionDef) else node.target.id
        for node in classes["_VecEnv"].body
        if isinstance(node, ast.FunctionDef | ast.AnnAssign)
    }
    for name in _ocean.ENVS:
        public = {m for m in dir(getattr(_ocean, name)) if not m.startswith("__")}
        public.discard("_pybind11_conduit_v1_")  # pybind11 internals
        assert public == members - {"__init__"}, name
