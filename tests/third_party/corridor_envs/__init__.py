"""A third-party env package for puffer's tests, installed by putting this folder on the path.

It is none of puffer's env families. Like MiniGrid, it registers its Gymnasium ids when
imported and declares no entry point, so `gym-Corridor-v0` and `gym-LongHall-v0` are found
only by importing it; `corridor_envs.duel` is a PettingZoo parallel env.
"""

import gymnasium

gymnasium.register(
    "Corridor-v0", entry_point="corridor_envs.corridor:Corridor", max_episode_steps=32
)
# A name unlike the package's: found by importing every Gymnasium package in turn.
gymnasium.register(
    "LongHall-v0",
    entry_point="corridor_envs.corridor:Corridor",
    kwargs={"length": 8},
    max_episode_steps=64,
)
