"""Connect4: Connect Four against a scripted opponent (csrc/connect4/connect4.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["Connect4", "Connect4Config"]

ROWS, COLS = 6, 7


@dataclass(frozen=True)
class Connect4Config:
    """Connect4 has no settings; the opponent and rewards are fixed in the C header."""


class Connect4(OceanEnv):
    """Connect Four on a 6x7 board against an opponent that wins, else blocks, else plays at
    random. Reward +1 win, -1 loss, 0 draw; a move into a full column loses (-1, terminal).

    Observation: (42,) float32 in {-1, 0, 1}; cell (row r, column c) at r * 7 + c, row 0 at
    the bottom; +1 the agent's pieces, -1 the opponent's. Action: Discrete(7), the column.

    Example:
        >>> env = Connect4(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((2, 42), Discrete(7))
        >>> env.close()
    """

    c_name = "connect4"
    config_class = Connect4Config
    single_observation_space = spaces.Box(-1.0, 1.0, (ROWS * COLS,), np.float32)
    single_action_space = spaces.Discrete(COLS)
