"""G2048: the game 2048 on a 4x4 board (csrc/g2048/g2048.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["G2048", "G2048Config"]

MAX_EXPONENT = 18  # 2^18 is the largest tile a 4x4 board can hold


@dataclass(frozen=True)
class G2048Config:
    """G2048 settings.

    Attributes:
        max_steps: moves per episode before truncation (stops a policy stalling forever).
    """

    max_steps: int = 100_000


class G2048(OceanEnv):
    """2048: slide and merge tiles; a 2 or 4 spawns after every move that changes the board.

    Reward: 0.01 * log2(new tile) summed over a move's merges; -0.01 for a move that changes
    nothing. Terminal when no move is possible. The log's `score` is the classic game score.

    Observation: (16,) uint8, log2 of each tile row-major (0 empty), in [0, 18].
    Action: Discrete(4): up, down, left, right.

    Example:
        >>> env = G2048(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, int((obs[0] > 0).sum())
        ((2, 16), dtype('uint8'), 2)
        >>> env.close()
    """

    c_name = "g2048"
    config_class = G2048Config
    single_observation_space = spaces.Box(0, MAX_EXPONENT, (16,), np.uint8)
    single_action_space = spaces.Discrete(4)
