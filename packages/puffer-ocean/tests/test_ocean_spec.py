"""The header is the env's only declaration: classes, spaces, config and registry entries all
come from each header's SPEC; the binding checks every action against it on every step."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from gymnasium import spaces

import puffer.core
import puffer.ocean
from puffer.core import APIUsageError
from puffer.core.registry import env_package
from puffer.ocean import _ocean


def test_ocean_every_header_is_a_class_and_a_registered_env() -> None:
    registered = puffer.core.registered_envs()
    for name in _ocean.ENVS:
        cls = puffer.ocean.ENVS[name]
        assert cls.c_name == name and getattr(puffer.ocean, cls.__name__) is cls
        assert name in registered and env_package(name) == "puffer-ocean"
        assert puffer.core.env_creator(name) is cls
        spec = _ocean.SPECS[name]
        assert cls.single_observation_space.shape == (spec["obs_size"],)
        assert cls.__doc__.startswith(spec["doc"][:40])


def test_ocean_config_dataclass_comes_from_the_header() -> None:
    fields = {f.name: f for f in dataclasses.fields(puffer.ocean.SnakeConfig)}
    config = puffer.ocean.SnakeConfig()
    assert config.num_snakes == 256 and isinstance(config.reward_food, float)
    doc = "grid columns, the 5-cell walls included"
    assert fields["width"].metadata == {"doc": doc, "min": 12, "max": 4096}
    assert dataclasses.fields(puffer.ocean.Connect4Config) == ()
    # The CLI reads a creator's config_class for its [env] defaults.
    assert puffer.ocean.Breakout.config_class().frameskip == 4


def test_ocean_spaces_from_the_spec() -> None:
    assert puffer.ocean.Target.single_action_space == spaces.MultiDiscrete([9, 5])
    assert puffer.ocean.Squared.single_action_space == spaces.Discrete(5)
    box = puffer.ocean.CartpoleContinuous.single_action_space
    assert isinstance(box, spaces.Box) and box.shape == (1,) and box.dtype == np.float32
    obs = puffer.ocean.Cartpole.single_observation_space
    assert obs.high[0] == np.float32(4.8) and np.isinf(obs.high[1])
    assert puffer.ocean.Snake.single_observation_space.dtype == np.int8


def test_ocean_config_out_of_range_names_the_field() -> None:
    with pytest.raises(APIUsageError, match=r"max_steps=0 is outside \[1, 1e\+09\]"):
        puffer.ocean.Squared(max_steps=0)
    with pytest.raises(APIUsageError, match="num_snakes \\+ num_food must be below"):
        puffer.ocean.Snake(width=14, height=14, num_snakes=4, num_food=100)
    with pytest.raises(APIUsageError, match="must be an int"):
        puffer.ocean.Snake(width=12.5)


@pytest.mark.parametrize("name", ["snake", "connect4", "tetris", "target"])
def test_ocean_out_of_range_action_raises_on_every_step(name: str) -> None:
    env = puffer.core.make(name, num_envs=2)
    env.reset(seed=0)
    actions = np.zeros_like(env.actions)
    for _ in range(40):  # past any warm-up window: the C check runs on every step
        env.step(actions)
    row = env.num_agents - 1
    actions[row] = 99
    before = env.observations.copy()
    with pytest.raises(APIUsageError, match=f"{name}: action 99 at row {row}.* is outside"):
        env.step(actions)
    np.testing.assert_array_equal(env.observations, before)  # nothing was stepped
    actions[row] = -1
    with pytest.raises(APIUsageError, match=f"action -1 at row {row}"):
        env.step(actions)
    env.close()


@pytest.mark.parametrize("name", ["cartpole", "breakout", "snake", "target"])
@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_ocean_wide_integer_actions_are_checked_before_the_cast(name: str, dtype: type) -> None:
    # The same rule as the Gymnasium path: 2**33 + 1 is refused, not stepped as int32 1.
    env = puffer.core.make(name, num_envs=2)
    env.reset(seed=0)
    actions = np.zeros(env.actions.shape, dtype)
    env.step(actions)
    actions[-1] = 2**33 + 1
    before = env.observations.copy()
    row = env.num_agents - 1
    with pytest.raises(APIUsageError, match=f"(?i){name}\\(.*action 8589934593 at row {row}\\b"):
        env.step(actions)
    np.testing.assert_array_equal(env.observations, before)  # nothing was stepped
    env.close()


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_ocean_continuous_action_outside_the_box_raises(value: float) -> None:
    env = puffer.ocean.CartpoleContinuous(num_envs=3)
    env.reset(seed=0)
    actions = np.zeros((3, 1), np.float32)
    env.step(actions)
    actions[1, 0] = value
    with pytest.raises(APIUsageError, match=f"action {value} at row 1 is not finite"):
        env.step(actions)
    actions[1, 0] = 1.5  # finite but outside the Box: clipping is the policy's job
    with pytest.raises(APIUsageError, match=r"action 1.5 at row 1 is outside \[-1, 1\]"):
        env.step(actions)
    actions[1, 0] = 1.0
    env.step(actions)
    env.close()


def test_ocean_action_shape_and_dtype_checked() -> None:
    env = puffer.ocean.Squared(num_envs=2)
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match="dtype float32"):
        env.step(np.zeros(2, np.float32))
    with pytest.raises(APIUsageError, match=r"shape \(3,\), expected \(2,\)"):
        env.step(np.zeros(3, np.int32))
    env.close()
