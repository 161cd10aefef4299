"""Creators: what the `puffer.envs` entry points name, each carrying its shipped TOML config."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

__all__ = ["config_file", "creator"]


def config_file(name: str) -> Traversable:
    """The TOML config `name` shipped in `puffer/envs/configs/` (`atari` -> `atari.toml`)."""
    return files("puffer.envs") / "configs" / f"{name}.toml"


def creator(env_class: Callable[..., Any], config: str, /, **fixed: Any) -> Callable[..., Any]:
    """`env_class` with `fixed` keywords bound, and `config_file` set to the family's TOML.

    The CLI reads `config_file` to find the TOML of an env that is not its own, and the
    signature (the class's, less the bound keywords) for the keys [env] accepts.
    """
    made = functools.partial(env_class, **fixed)
    made.config_file = config_file(config)  # type: ignore[attr-defined]
    return made
