"""MAgent2 battle: two armies of 81 soldiers on a 45x45 map, one buffer row per soldier.

The PettingZoo parallel env `magent2.environments.battle_v4` with its own settings (map 45,
1,000-step episodes, its rewards: +0.2 for attacking an enemy, +5 for a kill, -0.005 per step,
-0.1 for dying or attacking nothing). Both armies are played by the one policy being trained
(self-play, as PufferLib trains MAgent). Each soldier sees a (13, 13, 5) float32 window
(walls, own team, own HP, enemies, enemy HP), channels last; dead soldiers stay as masked rows
until the episode ends. Goes through `puffer.core.PettingZooPufferEnv`.
"""

from __future__ import annotations

from typing import Any

from puffer.core import Buffer, Vectorization
from puffer.envs._family import FAMILIES
from puffer.envs._shipped import creator

__all__ = ["make_battle"]


def make_battle(
    *,
    map_size: int = 45,
    max_cycles: int = 1000,
    seed: int | None = 0,
    render_mode: str | None = None,
    buf: Buffer | None = None,
) -> Any:
    """Battle on a `map_size` square map; observations (agents, 13, 13, 5) float32, actions
    (agents,) int32 in [0, 21) (stay, 12 moves, 8 attacks). The number of agents grows with
    the map: 162 at 45, 6 at 15 (a small map, for tests).

    Example:
        >>> env = make_battle(map_size=15)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((6, 13, 13, 5), dtype('float32'), Discrete(21))
    """
    FAMILIES["magent"].require("magent-battle")
    from magent2.environments import battle_v4

    from puffer.core import PettingZooPufferEnv

    env = battle_v4.parallel_env(map_size=map_size, max_cycles=max_cycles, render_mode=render_mode)
    return PettingZooPufferEnv(env, buf=buf, seed=seed)


battle = creator(make_battle, "magent", Vectorization.SINGLE)
