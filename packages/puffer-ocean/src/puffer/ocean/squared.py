"""Squared: walk to the target on an 11x11 grid (csrc/squared/squared.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["Squared", "SquaredConfig"]

GRID = 11


@dataclass(frozen=True)
class SquaredConfig:
    """Squared settings.

    Attributes:
        max_steps: steps before an episode is truncated.
    """

    max_steps: int = 3 * GRID


class Squared(OceanEnv):
    """One agent walks to a target on an 11x11 grid; reward 1 and a terminal on arrival.

    Observation: (121,) uint8 cells, row-major: 0 empty, 1 agent, 2 target.
    Action: Discrete(5): no-op, down, up, left, right (walls stop the agent).

    Example:
        >>> env = Squared(num_envs=4)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((4, 121), dtype('uint8'))
        >>> env.close()
    """

    c_name = "squared"
    config_class = SquaredConfig
    single_observation_space = spaces.Box(0, 2, (GRID * GRID,), np.uint8)
    single_action_space = spaces.Discrete(5)
