"""Creators: what the `puffer.envs` entry points name, each declaring its shipped TOML config."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["ShippedCreator", "config_file", "creator"]


def config_file(name: str) -> Traversable:
    """The TOML config `name` shipped in `puffer/envs/configs/` (`atari` -> `atari.toml`)."""
    return files("puffer.envs") / "configs" / f"{name}.toml"


class ShippedCreator(functools.partial):
    """An env class with keywords bound, and the config sources its registration declares.

    The trainer folds `config_sources` (here the family's TOML) into the env's config, and
    reads the signature (the class's, less the bound keywords) for the keys [env] accepts.
    """

    config_sources: tuple[Traversable, ...] = ()


def creator(env_class: Callable[..., Any], config: str, /, **fixed: Any) -> ShippedCreator:
    """`env_class` with `fixed` keywords bound, declaring the family TOML `config` as its config."""
    made = ShippedCreator(env_class, **fixed)
    made.config_sources = (config_file(config),)
    return made
