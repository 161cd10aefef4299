"""One test per bad input of emulation: each error names the env, the space and the value."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

from puffer.core import APIUsageError, EmulationError, GymnasiumPufferEnv, PettingZooPufferEnv
from puffer.core.checks import observation_problem
from puffer.core.emulation import CHECK_STEPS
from puffer.core.testing import ACTION_CATALOG, OBSERVATION_CATALOG, SpaceEnv


@pytest.fixture
def cartpole() -> GymnasiumPufferEnv:
    env = GymnasiumPufferEnv("CartPole-v1")
    env.reset(seed=0)
    return env


def test_wrong_action_shape(cartpole: GymnasiumPufferEnv) -> None:
    with pytest.raises(
        APIUsageError,
        match=r"CartPole-v1.*actions have shape \(2,\), expected \(1,\).*Discrete\(2\)",
    ):
        cartpole.step(np.zeros(2, np.int32))


def test_wrong_action_dtype(cartpole: GymnasiumPufferEnv) -> None:
    with pytest.raises(
        APIUsageError, match=r"CartPole-v1.*dtype float32, expected integers for Discrete\(2\)"
    ):
        cartpole.step(np.zeros(1, np.float32))


def test_out_of_range_discrete_action(cartpole: GymnasiumPufferEnv) -> None:
    with pytest.raises(APIUsageError, match=r"CartPole-v1.*action 2 .*outside Discrete\(2\)"):
        cartpole.step(np.array([2], np.int32))


def test_out_of_range_discrete_action_is_caught_after_the_checked_steps(
    cartpole: GymnasiumPufferEnv,
) -> None:
    for _ in range(CHECK_STEPS + 5):
        cartpole.step(np.zeros(1, np.int32))
    cartpole.actions[0] = 7  # written in place, as a vectorizer does
    with pytest.raises(APIUsageError, match=r"CartPole-v1.*action 7 .*outside Discrete\(2\)"):
        cartpole.step(cartpole.actions)


def test_out_of_range_leaf_of_a_mixed_action() -> None:
    env = GymnasiumPufferEnv(SpaceEnv, (OBSERVATION_CATALOG["box"], ACTION_CATALOG["dict-mixed"]))
    env.reset(seed=0)
    actions = np.zeros((1, 6), np.float32)
    actions[0, 0] = 4.0  # 'move' is Discrete(4, start=1): puffer index 4 is out of range
    with pytest.raises(
        APIUsageError, match=r"SpaceEnv.*action 4.0 at row 0, element 0 is outside.*\[0.0, 3.0\]"
    ):
        env.step(actions)


def test_non_integral_discrete_leaf_of_a_mixed_action() -> None:
    env = GymnasiumPufferEnv(SpaceEnv, (OBSERVATION_CATALOG["box"], ACTION_CATALOG["dict-mixed"]))
    env.reset(seed=0)
    actions = np.zeros((1, 6), np.float32)
    actions[0, 0] = 1.5
    with pytest.raises(
        APIUsageError, match=r"action 1.5 at \['move'\] is not a whole number.*Discrete\(4"
    ):
        env.step(actions)


def test_step_before_reset() -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    with pytest.raises(
        APIUsageError, match=r"GymnasiumPufferEnv\(env='CartPole-v1'\): step\(\) called before"
    ):
        env.step(np.zeros(1, np.int32))


def test_step_after_close(cartpole: GymnasiumPufferEnv) -> None:
    cartpole.close()
    cartpole.close()  # idempotent
    with pytest.raises(APIUsageError, match=r"CartPole-v1.*step\(\) called after close\(\)"):
        cartpole.step(np.zeros(1, np.int32))


@pytest.mark.parametrize(
    ("space", "match"),
    [
        (spaces.Text(4), r"SpaceEnv.*Text\(1, 4.*at root cannot be emulated"),
        (
            spaces.Dict(
                OrderedDict(pos=spaces.Discrete(2), seq=spaces.Sequence(spaces.Discrete(3)))
            ),
            r"SpaceEnv.*Sequence\(Discrete\(3\).*at \['seq'\] cannot be emulated",
        ),
    ],
    ids=["text", "nested-sequence"],
)
def test_space_that_cannot_be_emulated(space: spaces.Space, match: str) -> None:
    with pytest.raises(EmulationError, match=match):
        GymnasiumPufferEnv(SpaceEnv, (space, spaces.Discrete(2)))


def test_observation_outside_the_declared_space() -> None:
    env = GymnasiumPufferEnv(SpaceEnv, (OBSERVATION_CATALOG["box"], spaces.Discrete(2)), seed=0)
    env.env.bad_obs_at = 3
    env.reset()
    env.step(np.zeros(1, np.int32))
    env.step(np.zeros(1, np.int32))
    with pytest.raises(
        EmulationError,
        match=r"SpaceEnv.*outside its observation_space Box\(-2.0, 2.0, \(4,\).*'not an obs",
    ):
        env.step(np.zeros(1, np.int32))


def test_pettingzoo_wrong_action_shape() -> None:
    env = PettingZooPufferEnv(pettingzoo.make("parallel", "classic/rps-v2"))
    env.reset(seed=0)
    with pytest.raises(APIUsageError, match=r"rps_v2.*shape \(1,\), expected \(2,\)"):
        env.step(np.zeros(1, np.int32))


def test_constructor_misuse() -> None:
    with pytest.raises(APIUsageError, match="no env given"):
        GymnasiumPufferEnv()
    with pytest.raises(APIUsageError, match="pass them as env_kwargs"):
        GymnasiumPufferEnv("CartPole-v1", env_args=(1,))
    with pytest.raises(APIUsageError, match="env instance"):
        GymnasiumPufferEnv(SpaceEnv(spaces.Discrete(2), spaces.Discrete(2)), env_kwargs={"a": 1})


def test_observation_problems_name_the_leaf() -> None:
    space = OBSERVATION_CATALOG["nested"]
    space.seed(0)
    obs = space.sample()
    assert observation_problem(space, obs) is None
    obs["alpha"][1][0] = 2
    assert observation_problem(space, obs).startswith("at ['alpha'][1] (MultiBinary(5)): ")
    del obs["mid"]
    assert "at root: keys ['alpha', 'zeta'], expected ['zeta', 'alpha', 'mid']" in (
        observation_problem(space, obs)
    )
    # A same-kind cast (float64 values for a float32 Box) is accepted; NaN is not.
    box = spaces.Box(-1, 1, (2,), np.float32)
    assert observation_problem(box, np.zeros(2)) is None
    assert "outside" in observation_problem(box, np.array([0.0, np.nan], np.float32))


@pytest.mark.parametrize(
    ("bad_actions", "match"),
    [
        (np.zeros(2, np.int32), r"shape \(2,\), expected \(1,\)"),
        (np.zeros(1, np.float32), r"dtype float32, expected integers"),
        (np.array([5], np.int32), r"action 5 .*outside Discrete\(2\)"),
    ],
    ids=["shape", "dtype", "range"],
)
def test_bad_actions_are_caught_on_the_lean_path(
    cartpole: GymnasiumPufferEnv, bad_actions: np.ndarray, match: str
) -> None:
    for _ in range(CHECK_STEPS + 2):
        cartpole.step(np.zeros(1, np.int32))
    with pytest.raises(APIUsageError, match=match):
        cartpole.step(bad_actions)


def test_step_after_close_on_the_lean_path(cartpole: GymnasiumPufferEnv) -> None:
    for _ in range(CHECK_STEPS + 2):
        cartpole.step(np.zeros(1, np.int32))
    cartpole.close()
    with pytest.raises(APIUsageError, match=r"step\(\) called after close\(\)"):
        cartpole.step(np.zeros(1, np.int32))
