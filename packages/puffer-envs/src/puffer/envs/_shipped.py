"""Creators: what the `puffer.envs` entry points name, each declaring its shipped TOML config
and its vectorization."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from puffer.core import Vectorization

__all__ = ["ShippedCreator", "config_file", "creator"]


def config_file(name: str) -> Traversable:
    """The TOML config `name` shipped in `puffer/envs/configs/` (`atari` -> `atari.toml`)."""
    return files("puffer.envs") / "configs" / f"{name}.toml"


class ShippedCreator(functools.partial):
    """An env class with keywords bound, and what its registration declares.

    The trainer folds `config_sources` (here the family's TOML) into the env's config, picks
    the backend from `vectorization` (`puffer.core.declared_vectorization`), and reads the
    signature (the class's, less the bound keywords) for the keys [env] accepts.
    """

    config_sources: tuple[Traversable, ...] = ()
    vectorization: Vectorization


def creator(
    env_class: Callable[..., Any],
    config: str,
    /,
    vectorization: Vectorization = Vectorization.NATIVE,
    **fixed: Any,
) -> ShippedCreator:
    """`env_class` with `fixed` keywords bound, declaring the family TOML `config` as its config.

    `vectorization` is 'native' for the families that step `num_envs` games in one object
    (every family but PettingZoo's, whose creators make one multi-agent env: 'single').
    """
    made = ShippedCreator(env_class, **fixed)
    made.config_sources = (config_file(config),)
    made.vectorization = vectorization
    return made
