"""Memory: recall a cue after a delay, solvable only with memory (csrc/memory/memory.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["Memory", "MemoryConfig"]

CUES = 4


@dataclass(frozen=True)
class MemoryConfig:
    """Memory settings.

    Attributes:
        delay: blank steps between the cue and the query; an episode is delay + 2 steps.
    """

    delay: int = 8


class Memory(OceanEnv):
    """See one of 4 cues, wait `delay` blank steps, then name the cue when queried: reward 1
    if right, else 0, and a terminal. Actions before the query are ignored. The query looks the
    same whatever the cue, so a memoryless policy scores 1/4 on average; a recurrent one, 1.

    Observation: (5,) float32 in {0, 1}: the cue one-hot (first step only), then the query
    flag (last step only). Action: Discrete(4).

    Example:
        >>> env = Memory(num_envs=2, delay=3)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, float(obs[0, :4].sum()), float(obs[0, 4])
        ((2, 5), 1.0, 0.0)
        >>> env.close()
    """

    c_name = "memory"
    config_class = MemoryConfig
    single_observation_space = spaces.Box(0.0, 1.0, (CUES + 1,), np.float32)
    single_action_space = spaces.Discrete(CUES)
