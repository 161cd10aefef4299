"""Tetris: the 20x10 well with 7-bag pieces and line clears (csrc/tetris/tetris.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["Tetris", "TetrisConfig"]

OBS_SIZE = 234


@dataclass(frozen=True)
class TetrisConfig:
    """Tetris settings.

    Attributes:
        max_steps: steps per episode before truncation.
    """

    max_steps: int = 10_000


class Tetris(OceanEnv):
    """Tetris: place falling tetrominoes; full rows clear. Reward 0.1, 0.3, 0.5, 0.8 for
    clearing 1-4 lines at once; terminal when a new piece cannot enter the well.

    Observation: (234,) float32 in [-1, 1]: the 20x10 well row-major from the top (200; 1
    locked, -1 falling piece, 0 empty), one-hot falling piece (7), next piece (7) and rotation
    (4), column heights / 20 (10), then piece column, piece row, gravity phase, episode
    progress, lines cleared by the last lock / 4 and holes / 200 (6).
    Action: Discrete(7): no-op, left, right, rotate clockwise, rotate counter-clockwise, soft
    drop, hard drop. Gravity drops the piece one row every 4 steps.

    Example:
        >>> env = Tetris(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, int((obs[0, :200] == -1).sum())
        ((2, 234), 4)
        >>> env.close()
    """

    c_name = "tetris"
    config_class = TetrisConfig
    single_observation_space = spaces.Box(-1.0, 1.0, (OBS_SIZE,), np.float32)
    single_action_space = spaces.Discrete(7)
