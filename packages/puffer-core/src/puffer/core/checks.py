"""Validation of what crosses the emulation boundary: observations in, actions out.

Both run only on the first steps of an env (see `CHECK_STEPS` in `puffer.core.emulation`), so
they favour clear messages over speed: each names the leaf (by its path in the space), what
was expected and what came.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import Layout, Leaf, map_views, nativize

__all__ = ["check_action_row", "check_observation", "observation_problem"]


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


@functools.singledispatch
def _choices(space: spaces.Space) -> Any:
    """How many values each entry of a discrete action leaf can take."""
    raise EmulationError(f"{space!r} is not a discrete action space")


@_choices.register
def _(space: spaces.Discrete) -> Any:
    return int(space.n)


@_choices.register
def _(space: spaces.MultiDiscrete) -> Any:
    return space.nvec


@_choices.register
def _(space: spaces.MultiBinary) -> Any:
    return 2


def check_action_row(owner: object, layout: Layout, row: np.ndarray) -> None:
    """Raise `APIUsageError` if a discrete leaf of the action row is out of range or not integral."""
    pairs: list[tuple[Leaf, Any]] = []
    map_views(layout.tree, nativize(row, layout), lambda leaf, view: pairs.append((leaf, view)))
    for leaf, view in pairs:
        if not leaf.discrete:
            continue
        high = _choices(leaf.space)
        value = np.asarray(view).reshape(leaf.shape)
        if np.any(value < 0) or np.any(value >= high) or np.any(value != np.floor(value)):
            where = "" if layout.single_leaf else f" at {_path(leaf.path)}"
            raise APIUsageError(
                f"{owner}: action {value.tolist()}{where} is outside {leaf.space} "
                f"(puffer actions are zero-based: expected integers in [0, {high})); "
                "sample actions from env.single_action_space"
            )
