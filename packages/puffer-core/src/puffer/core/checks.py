"""Validation of what crosses the emulation boundary: observations in, mixed actions out.

Observations are checked on the first steps of an env (see `CHECK_STEPS` in
`puffer.core.emulation`), so the check favours clear messages over speed: it names the leaf (by
its path in the space), what was expected and what came. Action rows are checked on every step
by `puffer.core.actions`; only the integrality of discrete parts of mixed rows is checked here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import Layout, Leaf, map_views, nativize

__all__ = ["check_mixed_row", "check_observation", "is_mixed", "observation_problem"]


def _path(path: tuple) -> str:
    return "".join(f"[{key!r}]" for key in path)


# Observations ---------------------------------------------------------------------------


@functools.singledispatch
def _problem(space: spaces.Space, value: Any) -> str | None:
    return None if space.contains(value) else f"{value!r} is not in {space}"


@_problem.register
def _(space: spaces.Box, value: Any) -> str | None:
    array = np.asarray(value)
    if array.shape != space.shape:
        return f"shape {array.shape}, expected {space.shape}"
    # Same-kind casts (float64 -> float32) are accepted: the row stores the declared dtype.
    if not np.can_cast(array.dtype, space.dtype, "same_kind"):
        return f"dtype {array.dtype}, expected {space.dtype}"
    if not (np.all(array >= space.low) and np.all(array <= space.high)):
        return f"values outside [{space.low.min()}, {space.high.max()}] (or NaN)"
    return None


@_problem.register
def _(space: spaces.Discrete, value: Any) -> str | None:
    array = np.asarray(value)
    if array.shape != () or array.dtype.kind not in "iu":
        return f"{value!r} is not an integer scalar"
    if not space.start <= int(array) < space.start + space.n:
        return f"{int(array)} is outside [{space.start}, {space.start + space.n})"
    return None


def _integers_problem(value: Any, shape: tuple, low: Any, high: Any) -> str | None:
    array = np.asarray(value)
    if array.shape != shape or array.dtype.kind not in "biu":
        return f"shape {array.shape} dtype {array.dtype}, expected integers of shape {shape}"
    if np.any(array < low) or np.any(array >= high):
        return f"{array.tolist()} is outside [{low}, {high}) element-wise"
    return None


@_problem.register
def _(space: spaces.MultiDiscrete, value: Any) -> str | None:
    return _integers_problem(value, space.shape, space.start, space.start + space.nvec)


@_problem.register
def _(space: spaces.MultiBinary, value: Any) -> str | None:
    return _integers_problem(value, space.shape, 0, 2)


def _children(space: spaces.Space, value: Any) -> tuple[list, str | None]:
    if isinstance(space, spaces.Dict):
        if not isinstance(value, Mapping) or set(value) != set(space.spaces):
            keys = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            return [], f"keys {keys}, expected {list(space.spaces)}"
        return [(key, sub, value[key]) for key, sub in space.spaces.items()], None
    if not isinstance(value, tuple | list) or len(value) != len(space.spaces):
        return [], f"{type(value).__name__} {value!r}, expected a tuple of {len(space.spaces)}"
    return [
        (index, sub, item)
        for index, (sub, item) in enumerate(zip(space.spaces, value, strict=True))
    ], None


def observation_problem(space: spaces.Space, value: Any, path: tuple = ()) -> str | None:
    """None if `value` fits `space`, else where (a leaf path) and how it does not."""
    if isinstance(space, spaces.Dict | spaces.Tuple):
        children, problem = _children(space, value)
        if problem:
            return f"at {_path(path) or 'root'}: {problem}"
        for key, sub, item in children:
            problem = observation_problem(sub, item, (*path, key))
            if problem:
                return problem
        return None
    try:
        problem = _problem(space, value)
    except (TypeError, ValueError):
        problem = f"{value!r} is not a {type(space).__name__} value"
    return f"at {_path(path) or 'root'} ({space}): {problem}" if problem else None


def check_observation(owner: object, space: spaces.Space, obs: Any, where: str) -> None:
    """Raise `EmulationError` if `obs` is outside `space` (the env broke its own contract)."""
    problem = observation_problem(space, obs)
    if problem:
        raise EmulationError(
            f"{owner}: the env returned an observation outside its observation_space {space} "
            f"from {where}, {problem}; value {obs!r}; fix the env or declare a space that "
            "contains it"
        )


# Actions --------------------------------------------------------------------------------
# Shape, dtype and ranges of action rows are checked by `puffer.core.actions` on every step.
# What that check cannot see from the row's Box alone: in a mixed (discrete + continuous) row,
# packed as float32, the discrete leaves must hold whole numbers.


def is_mixed(layout: Layout) -> bool:
    """True if `layout` packs discrete leaves into a float row (a mixed Dict/Tuple action)."""
    return layout.row_dtype.kind == "f" and any(leaf.discrete for leaf in layout.leaves)


def check_mixed_row(owner: str, layout: Layout, row: np.ndarray) -> None:
    """Raise `APIUsageError` if a discrete leaf of a mixed float action row is not integral."""
    pairs: list[tuple[Leaf, Any]] = []
    map_views(layout.tree, nativize(row, layout), lambda leaf, view: pairs.append((leaf, view)))
    for leaf, view in pairs:
        value = np.asarray(view)
        if leaf.discrete and np.any(value != np.floor(value)):
            raise APIUsageError(
                f"{owner}: action {value.reshape(leaf.shape).tolist()} at "
                f"{_path(leaf.path)} is not a whole number, expected an integer choice of "
                f"{leaf.space} (zero-based); round discrete parts of mixed actions in the policy"
            )
