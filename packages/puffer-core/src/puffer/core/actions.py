"""The one action check: shape, dtype, range and finiteness of a batch of actions, every step.

Every place that steps envs with caller-supplied actions calls it: `PufferEnv.step` (so every
emulated Gymnasium/PettingZoo env and every native env), and every vectorizer's `send`. Native
Ocean envs pass `ranges=False` and check ranges in C, on the buffer; an array of any other dtype
is still range-checked here, on the caller's values, because the copy into the buffer casts it
(an int64 2**33 + 1 would reach C as int32 1, a float64 1e300 as float32 inf).

Actions are never clipped or rescaled here: an out-of-range continuous action is a bug in the
policy (clip to `single_action_space` there), so it raises like an out-of-range discrete one.

Cost: small batches (up to `SMALL` values) are checked in Python on `tolist()` values, which
beats numpy's per-call overhead; bigger ones with two vectorized comparisons and one reduction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.errors import APIUsageError

__all__ = ["SMALL", "ActionCheck", "action_checker", "check_actions"]

# Batches with at most this many action values are range-checked on Python lists.
SMALL = 16

ActionCheck = Callable[[np.ndarray], None]

_FLOAT_MAX = float(np.finfo(np.float64).max)


def _bounds(space: spaces.Space) -> tuple[str, np.ndarray, np.ndarray]:
    """(dtype kinds, inclusive low, inclusive high) of one action row, shaped like the row.

    Infinite Box bounds become the largest finite float, so that one pair of comparisons also
    rejects NaN (every comparison with NaN is False) and +-inf.
    """
    shape = tuple(space.shape or ())
    if isinstance(space, spaces.Discrete):
        start = int(space.start)
        return "iu", np.array(start), np.array(start + int(space.n) - 1)
    if isinstance(space, spaces.MultiDiscrete):
        low = np.broadcast_to(np.asarray(space.start, np.int64), shape)
        return "iu", low.copy(), low + np.asarray(space.nvec, np.int64) - 1
    if isinstance(space, spaces.MultiBinary):
        return "iu", np.zeros(shape, np.int64), np.ones(shape, np.int64)
    if isinstance(space, spaces.Box):
        low = np.broadcast_to(space.low, shape).astype(np.float64)
        high = np.broadcast_to(space.high, shape).astype(np.float64)
        low[~np.isfinite(low)] = -_FLOAT_MAX
        high[~np.isfinite(high)] = _FLOAT_MAX
        return "f", low, high
    raise APIUsageError(
        f"action space {space!r} has no action check; puffer actions are Discrete, "
        "MultiDiscrete, MultiBinary or Box (wrap structured spaces with GymnasiumPufferEnv)"
    )


def action_checker(
    space: spaces.Space,
    owner: str,
    *,
    ranges: bool = True,
    num_rows: int | None = None,
    values_only: bool = False,
) -> ActionCheck:
    """A function `check(actions)` doing `check_actions(owner, space, actions, ...)`.

    Build it once per env / vectorizer and call it on every step: the space's bounds are
    prepared here, not per call. With `values_only`, the function checks only ranges and
    finiteness, of a batch whose shape and dtype its caller guarantees (its own buffer, or a
    1-D memoryview of it); with `ranges=False` too, it does nothing. With `ranges=False` and
    not `values_only`, ranges are still checked on arrays of another dtype than the buffer's.
    """
    kinds, low, high = _bounds(space)
    row_shape = tuple(space.shape or ())
    ndim = len(row_shape) + 1
    full_shape = None if num_rows is None else (num_rows, *row_shape)
    width = max(1, int(np.prod(row_shape)))
    flat = not row_shape  # one value per row: tolist() is already flat
    low_list, high_list = low.ravel().tolist(), high.ravel().tolist()
    lone_low, lone_high = low_list[0], high_list[0]
    kind_name = "integers" if kinds == "iu" else "floats"
    buffer_dtype = np.dtype(np.int32 if kinds == "iu" else np.float32)

    def fail(actions: Any) -> None:
        """Raise for the first value of `actions` outside the bounds (the slow path)."""
        values = np.asarray(actions).reshape(-1).tolist()
        index = next(
            i for i, v in enumerate(values) if not low_list[i % width] <= v <= high_list[i % width]
        )
        row, column = divmod(index, width)
        value = values[index]
        where = f"row {row}" + ("" if width == 1 else f", element {column}")
        bound = f"[{low_list[column]}, {high_list[column]}]"
        if kinds == "f":
            problem = "is not finite" if not np.isfinite(value) else "is outside"
            fix = "clip continuous actions to single_action_space in the policy (envs do not clip)"
        else:
            problem = "is outside"
            fix = "sample actions from single_action_space (puffer actions are zero-based)"
        raise APIUsageError(
            f"{owner}: action {value} at {where} {problem} {space} (expected {kind_name} in "
            f"{bound}); {fix}"
        )

    # Range checks of a batch of the right shape and dtype: on Python values for small
    # batches, with numpy for big ones.
    def one_value(actions: Any) -> None:
        # One row of one value (a single-agent Discrete env): index a 1-D memoryview / array.
        if not lone_low <= actions[0] <= lone_high:
            fail(actions)

    def lone_values(actions: Any) -> None:
        for value in actions.tolist() if flat else actions.reshape(-1).tolist():
            if not lone_low <= value <= lone_high:
                fail(actions)

    def row_values(actions: Any) -> None:
        for value, low_value, high_value in zip(
            actions.reshape(-1).tolist(),
            low_list * len(actions),
            high_list * len(actions),
            strict=True,
        ):
            if not low_value <= value <= high_value:
                fail(actions)

    uniform = bool(low.min() == low.max() and high.min() == high.max())
    if uniform:
        # One bound pair for every element (Discrete, Box(-1, 1, ...)): two reductions, no
        # temporaries. A NaN anywhere makes min() or max() NaN, which fails the comparison.
        # numpy scalars of the bounds' dtype: a Python float beyond float32's range would be
        # cast (with an overflow warning) when compared with a float32 reduction.
        low_value, high_value = low.reshape(-1)[0], high.reshape(-1)[0]

        def array_values(actions: Any) -> None:
            actions = np.asarray(actions)
            if not (low_value <= actions.min() and actions.max() <= high_value):
                fail(actions)

    else:

        def array_values(actions: Any) -> None:
            actions = np.asarray(actions)
            inside = actions >= low
            inside &= actions <= high
            if not inside.all():
                fail(actions)

    small_values = lone_values if uniform else row_values

    def any_values(actions: Any) -> None:
        (small_values if len(actions) * width <= SMALL else array_values)(actions)

    if num_rows is None:
        in_range = any_values
    elif num_rows == 1 and flat:
        in_range = one_value
    else:
        in_range = small_values if num_rows * width <= SMALL else array_values

    def check(actions: np.ndarray) -> None:
        if type(actions) is not np.ndarray:
            _raise_shape(owner, space, actions, num_rows, row_shape)
        shape = actions.shape
        if shape != full_shape and (
            full_shape is not None or shape[1:] != row_shape or len(shape) != ndim
        ):
            _raise_shape(owner, space, actions, num_rows, row_shape)
        dtype = actions.dtype
        if dtype is not buffer_dtype and dtype.kind not in kinds:
            raise APIUsageError(
                f"{owner}: actions have dtype {dtype}, expected {kind_name} for "
                f"{space}; pass {buffer_dtype} actions"
            )
        # A dtype other than the buffer's is cast on the copy into it: check before the cast.
        if ranges or (dtype is not buffer_dtype and dtype != buffer_dtype):
            in_range(actions)

    if values_only:
        return in_range if ranges else _nothing
    return check


def _nothing(actions: Any) -> None:
    """The values-only check of an env that checks ranges itself."""


def _raise_shape(
    owner: str, space: spaces.Space, actions: Any, num_rows: int | None, row_shape: tuple
) -> None:
    dims = ["N" if num_rows is None else str(num_rows), *map(str, row_shape)]
    expected = f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"
    raise APIUsageError(
        f"{owner}: actions {_describe(actions)}, expected {expected} (one row per agent) for "
        f"{space}"
    )


def _describe(actions: object) -> str:
    if isinstance(actions, np.ndarray):
        return f"have shape {actions.shape}"
    return f"are a {type(actions).__name__}, not a numpy array; shape"


# check_actions() reuses the checker of a space it saw recently (keyed by identity; the entry
# holds the space, so its id cannot be reused while cached).
_CACHE: dict[tuple, tuple[spaces.Space, ActionCheck]] = {}
_CACHE_SIZE = 256


def check_actions(
    owner: str,
    space: spaces.Space,
    actions: np.ndarray,
    *,
    ranges: bool = True,
    num_rows: int | None = None,
) -> None:
    """Raise `APIUsageError` unless `actions` is a valid batch for `space`.

    Args:
        owner: names the env (or vectorizer) in the message.
        space: the env's `single_action_space` (one row): Discrete, MultiDiscrete, MultiBinary
            or Box.
        actions: the whole (N, *space.shape) numpy batch about to be stepped; integers for
            discrete spaces (any width), floats for Box.
        ranges: also check every value against the space (discrete: within
            `[start, start + n)`; Box: finite and within `[low, high]`). Native envs that
            check ranges of their buffer themselves pass False; actions of another dtype than
            the buffer's (int32, float32) are checked anyway, before the cast.
        num_rows: when given, N must equal it.

    Raises:
        APIUsageError: naming `owner`, the row (and element), the value and the fix.

    Example:
        >>> from gymnasium import spaces
        >>> check_actions("my-env", spaces.Discrete(3), np.array([0, 2], np.int32))
        >>> check_actions("my-env", spaces.Discrete(3), np.array([0, 3], np.int32))
        Traceback (most recent call last):
        ...
        puffer.core.errors.APIUsageError: my-env: action 3 at row 1 is outside Discrete(3) \
(expected integers in [0, 2]); sample actions from single_action_space (puffer actions are \
zero-based)
    """
    key = (id(space), owner, ranges, num_rows)
    entry = _CACHE.get(key)
    if entry is None or entry[0] is not space:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.clear()
        entry = _CACHE[key] = (
            space,
            action_checker(space, owner, ranges=ranges, num_rows=num_rows),
        )
    entry[1](actions)
