"""puffer.envs: third-party env families with their preprocessing, policies and configs.

Each family (Atari, MinAtar, MiniGrid, Crafter, butterfly, NetHack) is an optional extra; its library
is imported only when one of its envs is made. `FAMILIES` says which are installed and how to
install the others; `puffer.core.make("atari-breakout")` makes an env by id.
"""

from __future__ import annotations

from puffer.envs._family import FAMILIES, Family, MissingDependencyError, family
from puffer.envs.atari import AtariEnv
from puffer.envs.butterfly import make_knights_archers_zombies, make_pistonball
from puffer.envs.crafter import CrafterEnv, crafter_score, run_success_rates
from puffer.envs.minatar import MinAtarEnv
from puffer.envs.minigrid import MiniGridEnv
from puffer.envs.nethack import NetHackEnv

__version__ = "0.1.0"

__all__ = [
    "FAMILIES",
    "AtariEnv",
    "CrafterEnv",
    "Family",
    "MinAtarEnv",
    "MiniGridEnv",
    "MissingDependencyError",
    "NetHackEnv",
    "crafter_score",
    "run_success_rates",
    "family",
    "make_knights_archers_zombies",
    "make_pistonball",
]
