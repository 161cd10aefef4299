"""The one action check (`puffer.core.check_actions`): every space, every step, every env kind."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

from puffer.core import (
    APIUsageError,
    GymnasiumPufferEnv,
    PettingZooPufferEnv,
    action_checker,
    check_actions,
    random_actions,
)
from puffer.core.actions import SMALL, no_check, value_checker
from puffer.core.testing import ACTION_CATALOG, OBSERVATION_CATALOG, SpaceEnv

BOX = spaces.Box(-2.0, 2.0, (3,), np.float32)
UNBOUNDED = spaces.Box(-np.inf, np.inf, (2,), np.float32)
MULTI = spaces.MultiDiscrete([3, 4])
# Different bounds per element: the per-element (not the one-bound-pair) paths.
UNEVEN = spaces.Box(np.array([-1.0, 0.0], np.float32), np.array([1.0, 5.0], np.float32))


# Batches below and above SMALL values take the Python and the numpy path respectively.
@pytest.fixture(params=[2, SMALL + 40], ids=["small", "large"])
def rows(request) -> int:
    return request.param


@pytest.mark.parametrize(
    ("space", "dtype"),
    [
        (spaces.Discrete(5), np.int32),
        (spaces.Discrete(5), np.int64),
        (MULTI, np.int32),
        (spaces.MultiBinary(3), np.int8),
        (BOX, np.float32),
        (UNBOUNDED, np.float64),
        (UNEVEN, np.float32),
    ],
)
def test_valid_batches_pass(space: spaces.Space, dtype: type, rows: int) -> None:
    space.seed(0)
    batch = np.stack([np.asarray(space.sample()) for _ in range(rows)]).astype(dtype)
    check_actions("env", space, batch)
    check_actions("env", space, batch, num_rows=rows)


def _bad(space: spaces.Space, rows: int, row: int, column: int, value: float) -> np.ndarray:
    dtype = np.float32 if isinstance(space, spaces.Box) else np.int32
    batch = np.zeros((rows, *space.shape), dtype)
    batch.reshape(rows, -1)[row, column] = value
    return batch


@pytest.mark.parametrize(
    ("space", "column", "value", "message"),
    [
        (spaces.Discrete(5), 0, 5, r"action 5 at row 1 is outside Discrete\(5\).*\[0, 4\]"),
        (spaces.Discrete(5), 0, -1, r"action -1 at row 1 is outside"),
        (
            spaces.Discrete(3, start=-1),
            0,
            2,
            r"action 2 at row 1 is outside Discrete\(3, start=-1\).*\[-1, 1\]",
        ),
        (MULTI, 1, 4, r"action 4 at row 1, element 1 is outside MultiDiscrete.*\[0, 3\]"),
        (MULTI, 0, -3, r"action -3 at row 1, element 0 is outside"),
        (spaces.MultiBinary(3), 2, 2, r"action 2 at row 1, element 2 is outside"),
        (BOX, 2, 2.5, r"action 2.5 at row 1, element 2 is outside Box.*clip continuous"),
        (BOX, 0, -2.01, r"action -2.0099.* at row 1, element 0 is outside"),
        (BOX, 1, np.nan, r"action nan at row 1, element 1 is not finite"),
        (BOX, 1, np.inf, r"action inf at row 1, element 1 is not finite"),
        (UNBOUNDED, 0, np.inf, r"action inf at row 1, element 0 is not finite"),
        (UNBOUNDED, 1, -np.inf, r"action -inf at row 1, element 1 is not finite"),
        (UNBOUNDED, 1, np.nan, r"action nan at row 1, element 1 is not finite"),
        (UNEVEN, 1, 5.5, r"action 5.5 at row 1, element 1 is outside Box.*\[0.0, 5.0\]"),
        (UNEVEN, 0, -1.5, r"action -1.5 at row 1, element 0 is outside Box.*\[-1.0, 1.0\]"),
        (UNEVEN, 1, np.nan, r"action nan at row 1, element 1 is not finite"),
    ],
)
def test_bad_values_name_owner_row_and_value(
    space: spaces.Space, column: int, value: float, message: str, rows: int
) -> None:
    with pytest.raises(APIUsageError, match=r"^my-env: " + message):
        check_actions("my-env", space, _bad(space, rows, 1, column, value))


def test_ranges_false_checks_shape_and_dtype_only() -> None:
    check_actions("env", spaces.Discrete(2), np.array([7, -1], np.int32), ranges=False)
    check_actions("env", BOX, np.full((2, 3), np.nan, np.float32), ranges=False)
    with pytest.raises(APIUsageError, match="dtype float32, expected integers"):
        check_actions("env", spaces.Discrete(2), np.zeros(2, np.float32), ranges=False)


@pytest.mark.parametrize(
    ("space", "actions", "message"),
    [
        (spaces.Discrete(2), np.full(2, 2**33 + 1, np.int64), r"action 8589934593 at row 0"),
        (spaces.Discrete(2), np.array([0, 2**32 - 1], np.uint32), r"action 4294967295 at row 1"),
        (spaces.Discrete(2), np.array([0, 2], np.int8), r"action 2 at row 1"),
        (BOX, np.full((2, 3), 1e300), r"action 1e\+300 at row 0, element 0 is outside"),
    ],
)
def test_ranges_false_still_checks_arrays_the_buffer_cast_would_change(
    space: spaces.Space, actions: np.ndarray, message: str
) -> None:
    # int64 2**33 + 1 is int32 1 after the copy into the buffer, float64 1e300 is inf: what a
    # native env's C check would see is no longer what the caller passed.
    with pytest.raises(APIUsageError, match=r"^env: " + message):
        check_actions("env", space, actions, ranges=False)


@pytest.mark.parametrize(
    ("space", "actions", "message"),
    [
        (spaces.Discrete(2), np.zeros((2, 1), np.int32), r"have shape \(2, 1\), expected \(N,\)"),
        (MULTI, np.zeros(2, np.int32), r"have shape \(2,\), expected \(N, 2\)"),
        (BOX, np.zeros((2, 4), np.float32), r"have shape \(2, 4\), expected \(N, 3\)"),
        (spaces.Discrete(2), [0, 1], r"are a list, not a numpy array"),
        (spaces.Discrete(2), np.zeros(2, np.float32), r"have dtype float32, expected integers"),
        (spaces.Discrete(2), np.zeros(2, bool), r"have dtype bool, expected integers"),
        (BOX, np.zeros((2, 3), np.int32), r"have dtype int32, expected floats.*pass float32"),
    ],
)
def test_wrong_shape_or_dtype(space: spaces.Space, actions: object, message: str) -> None:
    with pytest.raises(APIUsageError, match=r"^env: actions " + message):
        check_actions("env", space, actions)  # type: ignore[arg-type]


def test_num_rows_is_enforced() -> None:
    with pytest.raises(APIUsageError, match=r"shape \(3,\), expected \(4,\)"):
        check_actions("env", spaces.Discrete(2), np.zeros(3, np.int32), num_rows=4)


@pytest.mark.parametrize("space", [spaces.Discrete(3), MULTI, BOX, UNEVEN])
@pytest.mark.parametrize("num_rows", [None, 1, 2, SMALL + 40])
def test_value_checker_checks_ranges_only(space: spaces.Space, num_rows: int | None) -> None:
    # The values-only check of an env's own buffer: the same range verdict as the full check,
    # for every batch form (one value, small lists, big arrays; fixed or any row count).
    rows = num_rows or 3
    check = value_checker(space, "env", num_rows=num_rows)
    full = action_checker(space, "env", num_rows=num_rows)
    dtype = np.float32 if isinstance(space, spaces.Box) else np.int32
    good = np.zeros((rows, *space.shape), dtype)
    if isinstance(space, spaces.Box):
        good += np.asarray(space.low, np.float32)  # the lower bound is inside
    check(good)
    full(good)
    bad = good.copy()
    bad.reshape(rows, -1)[rows - 1, -1] = 99
    for checker in (check, full):
        with pytest.raises(APIUsageError, match=rf"action 99(\.0)? at row {rows - 1}"):
            checker(bad)
    no_check(bad)  # an env checking ranges itself in C


def test_unsupported_space_is_named() -> None:
    with pytest.raises(APIUsageError, match=r"Text.*has no action check"):
        action_checker(spaces.Text(5), "env")


# Every step of emulated envs, on the first step and long after --------------------------


def _step_until(env, steps: int, good: np.ndarray) -> None:
    env.reset(seed=0)
    for _ in range(steps - 1):
        env.step(good)


@pytest.mark.parametrize("step", [1, 100])
@pytest.mark.parametrize("in_place", [False, True], ids=["passed", "in-place"])
@pytest.mark.parametrize(
    ("value", "message"),
    [(2, r"action 2 at row 0 is outside Discrete\(2\)"), (-1, r"action -1 at row 0")],
)
def test_gymnasium_discrete_checked_every_step(step, in_place, value, message) -> None:
    env = GymnasiumPufferEnv("CartPole-v1")
    _step_until(env, step, np.zeros(1, np.int32))
    bad = np.array([value], np.int32)
    if in_place:  # as a vectorizer's worker does: write the row, step with env.actions
        env.actions[:] = bad
        bad = env.actions
    with pytest.raises(APIUsageError, match=r"CartPole-v1.*" + message):
        env.step(bad)
    env.close()


@pytest.mark.parametrize("step", [1, 100])
@pytest.mark.parametrize("in_place", [False, True], ids=["passed", "in-place"])
@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.nan, "action nan at row 0 is not finite"),
        (np.inf, "action inf at row 0 is not finite"),
        (-np.inf, "action -inf at row 0 is not finite"),
        (2.5, r"action 2.5 at row 0 is outside Box.*\[-2.0, 2.0\].*clip"),
    ],
)
def test_gymnasium_box_checked_every_step(step, in_place, value, message) -> None:
    env = GymnasiumPufferEnv("Pendulum-v1")
    _step_until(env, step, np.zeros((1, 1), np.float32))
    bad = np.full((1, 1), value, np.float32)
    if in_place:
        env.actions[:] = bad
        bad = env.actions
    with pytest.raises(APIUsageError, match=r"Pendulum-v1.*" + message):
        env.step(bad)
    env.close()


def test_gymnasium_float64_actions_are_checked_before_the_cast() -> None:
    env = GymnasiumPufferEnv("Pendulum-v1")
    env.reset(seed=0)
    env.step(np.zeros((1, 1), np.float64))  # cast on copy
    with pytest.raises(APIUsageError, match=r"action 1e\+300 at row 0 is outside"):
        env.step(np.full((1, 1), 1e300))  # float32 inf after the cast
    env.close()


def test_mixed_action_rows_check_ranges_and_whole_numbers() -> None:
    env = GymnasiumPufferEnv(SpaceEnv, (OBSERVATION_CATALOG["box"], ACTION_CATALOG["dict-mixed"]))
    _step_until(env, 100, np.zeros((1, 6), np.float32))
    actions = np.zeros((1, 6), np.float32)
    actions[0, 1] = np.nan  # the Box part
    with pytest.raises(APIUsageError, match=r"SpaceEnv.*nan at row 0, element 1 is not finite"):
        env.step(actions)
    actions[0, 1], actions[0, 0] = 0.0, 0.5  # the Discrete part
    with pytest.raises(APIUsageError, match=r"0.5 at \['move'\] is not a whole number"):
        env.step(actions)
    env.close()


@pytest.mark.parametrize("step", [1, 100])
def test_pettingzoo_checked_every_step(step: int) -> None:
    env = PettingZooPufferEnv(pettingzoo.make("parallel", "classic/rps-v2"), seed=0)
    env.reset(seed=0)
    for _ in range(step - 1):
        env.step(np.zeros(2, np.int32))  # rps truncates and auto-resets along the way
    with pytest.raises(APIUsageError, match=r"rps.*action 3 at row 1 is outside Discrete\(3\)"):
        env.step(np.array([0, 3], np.int32))
    env.close()


@pytest.mark.parametrize("space", [spaces.Discrete(5), MULTI, BOX, UNEVEN], ids=str)
def test_random_actions_pass_the_check_and_repeat_with_the_seed(space: spaces.Space) -> None:
    drawn = random_actions(space, num_agents=3, count=4, seed=7)
    assert drawn.shape == (4, 3, *space.shape)
    for batch in drawn:
        check_actions("random_actions", space, batch, num_rows=3)
    np.testing.assert_array_equal(drawn, random_actions(space, 3, 4, seed=7))
    assert not np.array_equal(drawn, random_actions(space, 3, 4, seed=8))
