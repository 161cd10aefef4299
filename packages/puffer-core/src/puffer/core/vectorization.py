"""What an env creator makes, declared at its registration: the trainer's backend follows it.

Every registered creator carries a `vectorization` attribute:

    'native'   one object steps a whole batch itself, sized by its `num_envs` keyword (Ocean
               envs, puffer-envs' families): the trainer runs it as [vec] backend 'native'
    'single'   one env (of one or more agents) per object (emulated Gymnasium and PettingZoo
               envs): `puffer.vector` runs copies of it

An env class declares it as a class attribute (`OceanEnv`, `EmulatedEnv`, ...); a creator that
binds keywords (puffer-envs' `ShippedCreator`, the registry's Gymnasium and PettingZoo
creators) carries its own. `declared_vectorization` reads it and refuses a missing, unknown or
contradictory declaration with the fix.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Callable
from typing import Any

from puffer.core.errors import APIUsageError

__all__ = ["Vectorization", "declared_vectorization"]

# The keyword by which a native creator is told how many copies (or agents) to step.
NATIVE_COUNT = "num_envs"


class Vectorization(enum.StrEnum):
    """What a creator makes (module docstring)."""

    NATIVE = "native"
    SINGLE = "single"


_FIX = (
    "'native' (it takes num_envs and steps that many itself) or 'single' (one env per object; "
    "puffer.vector runs the copies)"
)


def declared_vectorization(creator: Callable[..., Any], name: str) -> Vectorization:
    """The `vectorization` that `creator` (registered as `name`) declares.

    Args:
        creator: an env creator (`puffer.core.env_creator(name)`).
        name: how messages name it.

    Returns:
        `Vectorization.NATIVE` or `Vectorization.SINGLE`.

    Raises:
        APIUsageError: the creator declares none, one that is neither value, or one its
            signature contradicts ('native' without a `num_envs` keyword, 'single' with one).

    Example:
        >>> from puffer.core import env_creator
        >>> declared_vectorization(env_creator("gym-CartPole-v1"), "gym-CartPole-v1")
        <Vectorization.SINGLE: 'single'>
    """
    declared = getattr(creator, "vectorization", None)
    if declared is None:
        raise APIUsageError(
            f"{name}: its creator {creator!r} declares no vectorization; give it a "
            f"`vectorization` attribute: {_FIX}"
        )
    try:
        kind = Vectorization(declared)
    except ValueError:
        raise APIUsageError(
            f"{name}: its creator declares vectorization {declared!r}, which is none of "
            f"{[v.value for v in Vectorization]}; declare {_FIX}"
        ) from None
    takes_count = _takes(creator, NATIVE_COUNT)
    if kind is Vectorization.NATIVE and not takes_count:
        raise APIUsageError(
            f"{name}: its creator declares vectorization 'native' but takes no {NATIVE_COUNT} "
            f"keyword; add {NATIVE_COUNT} (the copies it steps) or declare 'single'"
        )
    if kind is Vectorization.SINGLE and takes_count:
        raise APIUsageError(
            f"{name}: its creator declares vectorization 'single' but takes {NATIVE_COUNT}, a "
            f"native creator's keyword; declare 'native' or rename the keyword"
        )
    return kind


def _takes(creator: Callable[..., Any], keyword: str) -> bool:
    """Whether `creator` names `keyword` among its parameters (a `**kwargs` alone does not)."""
    try:
        parameters = inspect.signature(creator).parameters
    except (TypeError, ValueError):  # a builtin without a signature names nothing
        return False
    parameter = parameters.get(keyword)
    return parameter is not None and parameter.kind is not inspect.Parameter.POSITIONAL_ONLY
