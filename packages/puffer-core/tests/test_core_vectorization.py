"""`declared_vectorization`: a creator's registration says what it makes; a missing, unknown
or contradictory declaration is refused with the fix."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from puffer.core import (
    APIUsageError,
    GymnasiumPufferEnv,
    Vectorization,
    declared_vectorization,
    env_creator,
)
from puffer.core.registry import SingleEnvCreator


def _single(buf: Any = None, **kwargs: Any) -> Any:
    raise AssertionError("never called: the declaration is read, not the env")


def _declaring(creator: Any, declared: Any) -> Any:
    creator.vectorization = declared
    return creator


def test_the_declaration_is_what_is_read() -> None:
    native = _declaring(lambda num_envs=1, buf=None: None, "native")
    assert declared_vectorization(native, "mine") is Vectorization.NATIVE
    single = _declaring(lambda buf=None, **kwargs: None, Vectorization.SINGLE)
    assert declared_vectorization(single, "mine") is Vectorization.SINGLE


def test_a_creator_that_declares_nothing_is_refused_with_the_fix() -> None:
    with pytest.raises(APIUsageError, match=r"mine: .*declares no vectorization; give it a `vec"):
        declared_vectorization(_single, "mine")


def test_an_unknown_declaration_is_refused_naming_the_values() -> None:
    creator = _declaring(lambda num_envs=1: None, "vectorized")
    with pytest.raises(APIUsageError, match=r"'vectorized', which is none of \['native', 'si"):
        declared_vectorization(creator, "mine")


def test_native_without_num_envs_is_refused() -> None:
    creator = _declaring(lambda buf=None, **kwargs: None, "native")
    with pytest.raises(APIUsageError, match="'native' but takes no num_envs keyword; add num_envs"):
        declared_vectorization(creator, "mine")


def test_single_with_num_envs_is_refused() -> None:
    creator = _declaring(lambda num_envs=4, buf=None: None, "single")
    with pytest.raises(APIUsageError, match="'single' but takes num_envs, a native creator's"):
        declared_vectorization(creator, "mine")


def test_a_native_class_declares_it_and_its_subclasses_inherit_it() -> None:
    bandit = env_creator("bandit")  # an Ocean sanity class
    assert declared_vectorization(bandit, "bandit") is Vectorization.NATIVE
    assert GymnasiumPufferEnv.vectorization is Vectorization.SINGLE


@pytest.mark.parametrize("name", ["gym-CartPole-v1", "pettingzoo-classic.rps_v2"])
def test_the_registry_declares_its_emulated_creators_single_and_they_pickle(name: str) -> None:
    creator = env_creator(name)
    assert isinstance(creator, SingleEnvCreator)
    assert declared_vectorization(creator, name) is Vectorization.SINGLE
    env = pickle.loads(pickle.dumps(creator))()
    try:
        assert env.num_agents >= 1
    finally:
        env.close()
