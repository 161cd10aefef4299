"""The env registry: `make(name, **kwargs)` for every env any installed package provides.

Names come from three places:
- the `puffer.envs` entry-point group: an installed package declares
  `[project.entry-points."puffer.envs"] bandit = "puffer.ocean.sanity:Bandit"`, a callable
  that takes `buf=None` and keyword config and returns a `PufferEnv`;
- the `puffer.env_families` group: one entry point names a mapping `{name: creator}`, for a
  package whose envs are enumerated at import (`ocean = "puffer.ocean:ENVS"`, every C env);
- `gym-<id>` for any id in Gymnasium's registry (emulated with `GymnasiumPufferEnv`);
- `pettingzoo-<family>.<module>` (e.g. `pettingzoo-classic.rps_v2`) or a PettingZoo registry
  id (`pettingzoo-classic/rps-v2`), emulated with `PettingZooPufferEnv` (parallel API where the
  env has one, else its AEC env through PettingZoo's converter).
"""

from __future__ import annotations

import difflib
import functools
import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from puffer.core.env import PufferEnv
from puffer.core.errors import EnvNotFoundError

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILY_GROUP",
    "env_creator",
    "env_package",
    "make",
    "registered_envs",
]

ENTRY_POINT_GROUP = "puffer.envs"
FAMILY_GROUP = "puffer.env_families"
GYM_PREFIX = "gym-"
PETTINGZOO_PREFIX = "pettingzoo-"


def _entries() -> dict[str, tuple[str, Callable[[], Any], str | None]]:
    """Every registered name -> (`module:attr`, a loader of its creator, its distribution)."""
    entries: dict[str, tuple[str, Callable[[], Any], str | None]] = {}
    for ep in entry_points(group=FAMILY_GROUP):
        package = ep.dist.name if ep.dist is not None else None
        for name, creator in ep.load().items():
            entries[name] = (f"{ep.value}[{name!r}]", lambda creator=creator: creator, package)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        entries[ep.name] = (ep.value, ep.load, ep.dist.name if ep.dist is not None else None)
    return entries


def registered_envs() -> dict[str, str]:
    """Names registered through the `puffer.envs` and `puffer.env_families` entry points,
    mapped to their `module:attr` (`module:attr['name']` for a family member)."""
    return {name: value for name, (value, _, _) in _entries().items()}


def env_package(name: str) -> str | None:
    """The distribution that registers `name` (e.g. `puffer-ocean`), None when not registered."""
    entry = _entries().get(name)
    return entry[2] if entry is not None else None


def _known_names() -> list[str]:
    import gymnasium

    parallel_ids, aec_ids = _pettingzoo_ids()
    return [
        *registered_envs(),
        *(GYM_PREFIX + env_id for env_id in gymnasium.registry),
        *(PETTINGZOO_PREFIX + env_id for env_id in {**aec_ids, **parallel_ids}),
    ]


def env_creator(name: str) -> Callable[..., PufferEnv]:
    """Resolve `name` to a callable `creator(buf=None, **kwargs) -> PufferEnv`.

    Raises:
        EnvNotFoundError: no installed package registers `name`; the message lists close names.
    """
    entry = _entries().get(name)
    if entry is not None:
        return entry[1]()
    if name.startswith(GYM_PREFIX):
        import gymnasium

        env_id = name[len(GYM_PREFIX) :]
        if env_id in gymnasium.registry:
            from puffer.core.emulation import GymnasiumPufferEnv

            def make_gym(buf=None, **kwargs: Any) -> PufferEnv:
                return GymnasiumPufferEnv(env_id, env_kwargs=kwargs, buf=buf)

            return make_gym
    if name.startswith(PETTINGZOO_PREFIX):
        creator = _pettingzoo_creator(name[len(PETTINGZOO_PREFIX) :])
        if creator is not None:
            from puffer.core.pettingzoo import PettingZooPufferEnv

            def make_pettingzoo(buf=None, **kwargs: Any) -> PufferEnv:
                return PettingZooPufferEnv(creator, env_kwargs=kwargs, buf=buf)

            return make_pettingzoo
    close = difflib.get_close_matches(name, _known_names(), n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "."
    raise EnvNotFoundError(
        f"no env named {name!r}{hint} `puffer list` shows the registered names; any Gymnasium "
        "id works as gym-<id>, any PettingZoo env as pettingzoo-<family>.<module>"
    )


def _pettingzoo_ids() -> tuple[dict, dict]:
    try:
        import pettingzoo
    except ImportError:
        return {}, {}
    return getattr(pettingzoo, "parallel_registry", {}), getattr(pettingzoo, "aec_registry", {})


def _pettingzoo_creator(suffix: str) -> Callable[..., Any] | None:
    """A creator for `classic.rps_v2` (module style) or `classic/rps-v2` (registry id)."""
    family, _, module = suffix.partition(".")
    base, _, version = module.rpartition("_v")
    candidates = [suffix, f"{family}/{base}-v{version}"] if base else [suffix]
    parallel_ids, aec_ids = _pettingzoo_ids()
    for env_id in candidates:
        # Prefer PettingZoo's registry: importing env modules directly is deprecated there.
        for env_type, ids in (("parallel", parallel_ids), ("aec", aec_ids)):
            if env_id in ids:
                import pettingzoo

                return functools.partial(pettingzoo.make, env_type, env_id)
    try:
        module_object = importlib.import_module(f"pettingzoo.{suffix}")
    except ImportError:
        return None
    return getattr(module_object, "parallel_env", None) or getattr(module_object, "env", None)


def make(name: str, buf=None, **kwargs: Any) -> PufferEnv:
    """Create the env registered as `name`, bound to `buf` if given.

    Example:
        >>> from puffer.core import make
        >>> env = make("gym-CartPole-v1")
        >>> env.single_observation_space.shape
        (4,)
    """
    return env_creator(name)(buf=buf, **kwargs)
