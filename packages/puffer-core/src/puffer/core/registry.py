"""The env registry: `make(name, **kwargs)` for every env any installed package provides.

Names come from three places:
- the `puffer.envs` entry-point group: an installed package declares
  `[project.entry-points."puffer.envs"] breakout = "puffer.ocean:Breakout"`, a callable
  that takes `buf=None` and keyword config and returns a `PufferEnv`;
- `gym-<id>` for any id in Gymnasium's registry (emulated with `GymnasiumPufferEnv`);
- `pettingzoo-<family>.<module>` (e.g. `pettingzoo-classic.rps_v2`), emulated with
  `PettingZooPufferEnv` through the module's `parallel_env`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from puffer.core.env import PufferEnv
from puffer.core.errors import EnvNotFoundError

__all__ = ["ENTRY_POINT_GROUP", "env_creator", "make", "registered_envs"]

ENTRY_POINT_GROUP = "puffer.envs"
GYM_PREFIX = "gym-"
PETTINGZOO_PREFIX = "pettingzoo-"


def registered_envs() -> dict[str, str]:
    """Names registered through the `puffer.envs` entry points, mapped to their `module:attr`."""
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _known_names() -> list[str]:
    import gymnasium

    return [*registered_envs(), *(GYM_PREFIX + env_id for env_id in gymnasium.registry)]


def env_creator(name: str) -> Callable[..., PufferEnv]:
    """Resolve `name` to a callable `creator(buf=None, **kwargs) -> PufferEnv`.

    Raises:
        EnvNotFoundError: no installed package registers `name`; the message lists close names.
    """
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            return ep.load()
    if name.startswith(GYM_PREFIX):
        import gymnasium

        env_id = name[len(GYM_PREFIX) :]
        if env_id in gymnasium.registry:
            from puffer.core.emulation import GymnasiumPufferEnv

            def make_gym(buf=None, **kwargs: Any) -> PufferEnv:
                return GymnasiumPufferEnv(env_id, env_kwargs=kwargs, buf=buf)

            return make_gym
    if name.startswith(PETTINGZOO_PREFIX):
        module_name = "pettingzoo." + name[len(PETTINGZOO_PREFIX) :]
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            module = None
        if module is not None and hasattr(module, "parallel_env"):
            from puffer.core.emulation import PettingZooPufferEnv

            def make_pettingzoo(buf=None, **kwargs: Any) -> PufferEnv:
                return PettingZooPufferEnv(module.parallel_env, env_kwargs=kwargs, buf=buf)

            return make_pettingzoo
    close = difflib.get_close_matches(name, _known_names(), n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise EnvNotFoundError(
        f"no env named {name!r}{hint} Registered: `puffer list`, or "
        f"gym-<Gymnasium id> / pettingzoo-<family>.<module>"
    )


def make(name: str, buf=None, **kwargs: Any) -> PufferEnv:
    """Create the env registered as `name`, bound to `buf` if given.

    Example:
        >>> from puffer.core import make
        >>> env = make("gym-CartPole-v1")
        >>> env.single_observation_space.shape
        (4,)
    """
    return env_creator(name)(buf=buf, **kwargs)
