"""puffer.ocean: environments written in C, stepped in bulk over the buffer contract's arrays.

Every env is a `puffer.core.PufferEnv` holding `num_envs` C instances; `reset` and `step` run in
one C call each and write the bound arrays in place. `render()` returns an RGB uint8 frame drawn
by a small software rasterizer. Each env's class (`Squared`, `Breakout`, ...) and config
dataclass (`SquaredConfig`, ...) are built at import from the spec its C header declares;
`ENVS` maps registry names to classes, and is what the `puffer.env_families` entry point
registers, so `puffer.core.make(name)` finds every C env the binding was built with.

Example:
    >>> import puffer.core
    >>> env = puffer.core.make("squared", num_envs=8)
    >>> obs, _ = env.reset(seed=1)
    >>> obs.shape
    (8, 121)
    >>> env.close()
"""

from __future__ import annotations

from puffer.ocean import _ocean
from puffer.ocean._ocean import __version__
from puffer.ocean.env import OceanEnv, env_class
from puffer.ocean.render import frame_to_ansi, write_png

# Registry name -> class, one per header in csrc/envs.h.
ENVS: dict[str, type[OceanEnv]] = {name: env_class(name) for name in _ocean.ENVS}

# The classes and config dataclasses by name, as `from puffer.ocean import Breakout` expects.
for _cls in ENVS.values():
    globals()[_cls.__name__] = _cls
    globals()[_cls.config_class.__name__] = _cls.config_class

__all__ = [
    "ENVS",
    "OceanEnv",
    "__version__",
    "env_class",
    "frame_to_ansi",
    "write_png",
    *(cls.__name__ for cls in ENVS.values()),
    *(cls.config_class.__name__ for cls in ENVS.values()),
]
del _cls
