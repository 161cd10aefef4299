"""Emulated envs hold no reference cycles, so closing a vectorizer frees their rows at once."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pettingzoo
import pytest

from puffer.core import GymnasiumPufferEnv, PettingZooPufferEnv, PufferEnv
from puffer.core.testing import ACTION_CATALOG, OBSERVATION_CATALOG, SpaceEnv


@pytest.mark.parametrize(
    "make_env",
    [
        lambda: GymnasiumPufferEnv("CartPole-v1"),
        lambda: GymnasiumPufferEnv(
            SpaceEnv, (OBSERVATION_CATALOG["nested"], ACTION_CATALOG["dict-mixed"])
        ),
        lambda: PettingZooPufferEnv(pettingzoo.make("parallel", "classic/rps-v2")),
    ],
    ids=["cartpole", "structured", "rps"],
)
def test_envs_are_freed_without_the_garbage_collector(make_env: Callable[[], PufferEnv]) -> None:
    # A cycle would keep shared-memory rows exported until a GC pass, and unlinking them fail.
    gc.disable()
    try:
        env = make_env()
        env.reset(seed=0)
        env.step(env.actions)
        ref = weakref.ref(env)
        del env
        assert ref() is None
    finally:
        gc.enable()
