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
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.errors import APIUsageError

__all__ = ["SMALL", "ActionCheck", "action_checker", "check_actions", "no_check", "value_checker"]

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


@dataclass(frozen=True)
class _Row:
    """One action row of `space`, prepared once per checker: its shape, dtype kinds and
    inclusive bounds (as arrays and as flat Python lists), and the message of a bad value."""

    space: spaces.Space
    owner: str
    shape: tuple[int, ...]
    kinds: str
    low: np.ndarray
    high: np.ndarray
    low_list: list
    high_list: list
    width: int
    uniform: bool

    @classmethod
    def of(cls, space: spaces.Space, owner: str) -> _Row:
        kinds, low, high = _bounds(space)
        return cls(
            space=space,
            owner=owner,
            shape=tuple(space.shape or ()),
            kinds=kinds,
            low=low,
            high=high,
            low_list=low.ravel().tolist(),
            high_list=high.ravel().tolist(),
            width=max(1, int(np.prod(space.shape or ()))),
            # One bound pair for every element (Discrete, Box(-1, 1, ...)).
            uniform=bool(low.min() == low.max() and high.min() == high.max()),
        )

    @property
    def kind_name(self) -> str:
        return "integers" if self.kinds == "iu" else "floats"

    @property
    def buffer_dtype(self) -> np.dtype:
        """The dtype of the env's action buffer, into which actions are copied (cast)."""
        return np.dtype(np.int32 if self.kinds == "iu" else np.float32)

    def fail(self, actions: Any) -> None:
        """Raise for the first value of `actions` outside the bounds (the slow path)."""
        low_list, high_list, width = self.low_list, self.high_list, self.width
        values = np.asarray(actions).reshape(-1).tolist()
        index = next(
            i for i, v in enumerate(values) if not low_list[i % width] <= v <= high_list[i % width]
        )
        row, column = divmod(index, width)
        value = values[index]
        where = f"row {row}" + ("" if width == 1 else f", element {column}")
        bound = f"[{low_list[column]}, {high_list[column]}]"
        if self.kinds == "f":
            problem = "is not finite" if not np.isfinite(value) else "is outside"
            fix = "clip continuous actions to single_action_space in the policy (envs do not clip)"
        else:
            problem = "is outside"
            fix = "sample actions from single_action_space (puffer actions are zero-based)"
        raise APIUsageError(
            f"{self.owner}: action {value} at {where} {problem} {self.space} (expected "
            f"{self.kind_name} in {bound}); {fix}"
        )


# The range checks, one per batch form. Each takes a batch of the right shape and dtype; the
# list forms beat numpy's per-call overhead up to `SMALL` values, the array forms win above.


def _one_value_check(row: _Row) -> ActionCheck:
    """One row of one value (a single-agent Discrete env): index a 1-D memoryview / array."""
    low, high, fail = row.low_list[0], row.high_list[0], row.fail

    def one_value(actions: Any) -> None:
        if not low <= actions[0] <= high:
            fail(actions)

    return one_value


def _uniform_list_check(row: _Row) -> ActionCheck:
    """Small batches under one bound pair, on Python values."""
    low, high, fail, flat = row.low_list[0], row.high_list[0], row.fail, not row.shape

    def lone_values(actions: Any) -> None:
        for value in actions.tolist() if flat else actions.reshape(-1).tolist():
            if not low <= value <= high:
                fail(actions)

    return lone_values


def _per_element_list_check(row: _Row) -> ActionCheck:
    """Small batches with bounds per element, on Python values."""
    low_list, high_list, fail = row.low_list, row.high_list, row.fail

    def row_values(actions: Any) -> None:
        for value, low_value, high_value in zip(
            actions.reshape(-1).tolist(),
            low_list * len(actions),
            high_list * len(actions),
            strict=True,
        ):
            if not low_value <= value <= high_value:
                fail(actions)

    return row_values


def _uniform_array_check(row: _Row) -> ActionCheck:
    """Big batches under one bound pair: two reductions, no temporaries. A NaN anywhere makes
    min() or max() NaN, which fails the comparison."""
    # numpy scalars of the bounds' dtype: a Python float beyond float32's range would be cast
    # (with an overflow warning) when compared with a float32 reduction.
    low, high, fail = row.low.reshape(-1)[0], row.high.reshape(-1)[0], row.fail

    def array_values(actions: Any) -> None:
        actions = np.asarray(actions)
        if not (low <= actions.min() and actions.max() <= high):
            fail(actions)

    return array_values


def _per_element_array_check(row: _Row) -> ActionCheck:
    """Big batches with bounds per element: two comparisons and one reduction."""
    low, high, fail = row.low, row.high, row.fail

    def array_values(actions: Any) -> None:
        actions = np.asarray(actions)
        inside = actions >= low
        inside &= actions <= high
        if not inside.all():
            fail(actions)

    return array_values


def _range_check(row: _Row, num_rows: int | None) -> ActionCheck:
    """The range check for batches of `num_rows` rows (None: any count, chosen per call)."""
    small = (_uniform_list_check if row.uniform else _per_element_list_check)(row)
    big = (_uniform_array_check if row.uniform else _per_element_array_check)(row)
    if num_rows == 1 and not row.shape:
        return _one_value_check(row)
    if num_rows is not None:
        return small if num_rows * row.width <= SMALL else big
    width = row.width

    def any_values(actions: Any) -> None:
        (small if len(actions) * width <= SMALL else big)(actions)

    return any_values


def _shape_dtype_check(row: _Row, num_rows: int | None) -> Callable[[Any], None]:
    """The check that `actions` is an (N, *row shape) numpy array of the row's dtype kind
    (N = `num_rows` when given)."""
    owner, space, shape, kinds = row.owner, row.space, row.shape, row.kinds
    ndim = len(shape) + 1
    full_shape = None if num_rows is None else (num_rows, *shape)
    buffer_dtype, kind_name = row.buffer_dtype, row.kind_name

    def shape_dtype(actions: Any) -> None:
        if type(actions) is not np.ndarray:
            _raise_shape(owner, space, actions, num_rows, shape)
        batch_shape = actions.shape
        if batch_shape != full_shape and (
            full_shape is not None or batch_shape[1:] != shape or len(batch_shape) != ndim
        ):
            _raise_shape(owner, space, actions, num_rows, shape)
        dtype = actions.dtype
        if dtype is not buffer_dtype and dtype.kind not in kinds:
            raise APIUsageError(
                f"{owner}: actions have dtype {dtype}, expected {kind_name} for "
                f"{space}; pass {buffer_dtype} actions"
            )

    return shape_dtype


def action_checker(
    space: spaces.Space, owner: str, *, ranges: bool = True, num_rows: int | None = None
) -> ActionCheck:
    """A function `check(actions)` doing `check_actions(owner, space, actions, ...)`: shape and
    dtype, then the values' ranges.

    Build it once per env / vectorizer and call it on every step: the space's bounds are
    prepared here, not per call. With `ranges=False` ranges are still checked on arrays of
    another dtype than the buffer's (the copy into it casts them).
    """
    row = _Row.of(space, owner)
    shape_dtype, in_range = _shape_dtype_check(row, num_rows), _range_check(row, num_rows)
    buffer_dtype = row.buffer_dtype

    def check(actions: np.ndarray) -> None:
        shape_dtype(actions)
        dtype = actions.dtype
        # A dtype other than the buffer's is cast on the copy into it: check before the cast.
        if ranges or (dtype is not buffer_dtype and dtype != buffer_dtype):
            in_range(actions)

    return check


def value_checker(space: spaces.Space, owner: str, num_rows: int | None = None) -> ActionCheck:
    """A function checking only the ranges and finiteness of a batch whose shape and dtype its
    caller guarantees (its own buffer, or a 1-D memoryview of it)."""
    return _range_check(_Row.of(space, owner), num_rows)


def no_check(actions: Any) -> None:
    """The value check of an env that checks ranges itself (in C, on its buffer)."""


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
