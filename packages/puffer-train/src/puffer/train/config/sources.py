"""Where an env's shipped config comes from: its ordered tuple of config sources.

A source is a TOML file or `derive_defaults` (keys derived from the env's spaces). An env that
ships a training config declares its sources at registration (an Ocean class's or a
puffer-envs creator's `config_sources`); the Python envs puffer emulates get theirs here,
since their PPO settings are the trainer's: `gym-<id>` ids of Gymnasium's classic control,
Box2D and MuJoCo are derived keys, their family's TOML (`envs/families/`), then the member's
own TOML where it has one (`envs/gym-Pusher-v5.toml`); a `pettingzoo-` id with a TOML in
`envs/` is that TOML; any other env is derived keys alone.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

from puffer.train.config.derive import Derived, derive_defaults

__all__ = ["Source", "config_sources", "source_origin"]

Source = Traversable | Callable[[Callable[..., Any], dict[str, Any]], list[Derived]]
"""A TOML file, or a function `(creator, env keys) -> derived keys`."""

# Gymnasium entry-point modules -> family TOML, the most specific module first (classic
# control's Box-action envs get their own).
_FAMILIES = {
    "gymnasium.envs.classic_control.continuous_mountain_car": "classic-control-continuous",
    "gymnasium.envs.classic_control.pendulum": "classic-control-continuous",
    "gymnasium.envs.classic_control": "classic-control",
    "gymnasium.envs.box2d": "box2d",
    "gymnasium.envs.mujoco": "mujoco",
}
_ENVS = files("puffer.train.config") / "envs"


def config_sources(env_name: str, creator: Callable[..., Any]) -> tuple[Source, ...]:
    """The ordered sources of `env_name`'s shipped config, lowest layer first.

    Args:
        env_name: a registered env name, e.g. "breakout" or "gym-Hopper-v5".
        creator: its creator (`puffer.core.env_creator(env_name)`).

    Returns:
        The creator's declared `config_sources` where it has them, else this package's for
        the `gym-`/`pettingzoo-` id, else `(derive_defaults,)`.
    """
    declared: tuple[Traversable, ...] | None = getattr(creator, "config_sources", None)
    if declared:
        return declared
    own = _ENVS / f"{env_name}.toml"
    if env_name.startswith("pettingzoo-") and own.is_file():
        return (own,)
    env_id = env_name.removeprefix("gym-").rpartition(":")[2]  # `gym-module:Id` is Id's
    family = _family(env_id) if env_name.startswith("gym-") else None
    if family is None:
        return (derive_defaults,)
    member = _ENVS / f"gym-{env_id}.toml"
    return (derive_defaults, family, *([member] if member.is_file() else []))


def source_origin(source: Traversable) -> str:
    """How messages and notes name a TOML source: `families/mujoco.toml`, `breakout.toml`."""
    family = source == _ENVS / "families" / source.name
    return f"families/{source.name}" if family else source.name


def _family(env_id: str) -> Traversable | None:
    """The family TOML of a registered Gymnasium id, matched by its entry point's module."""
    import gymnasium

    entry = gymnasium.registry[env_id].entry_point
    if not isinstance(entry, str):
        return None
    module = entry.partition(":")[0]
    for package, family in _FAMILIES.items():
        if module == package or module.startswith(package + "."):
            return _ENVS / "families" / f"{family}.toml"
    return None
