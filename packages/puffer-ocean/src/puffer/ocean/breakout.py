"""Breakout on an 18x6 wall with frameskip 4 (csrc/breakout/breakout.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv, check_positive

__all__ = ["Breakout", "BreakoutConfig"]

BRICKS = 18 * 6


@dataclass(frozen=True)
class BreakoutConfig:
    """Breakout settings.

    Attributes:
        frameskip: frames each action is repeated for (4, as Atari agents usually play).
        max_steps: steps before an episode is truncated.
    """

    frameskip: int = 4
    max_steps: int = 10_000

    def __post_init__(self) -> None:
        check_positive(self, "frameskip", "max_steps")


class Breakout(OceanEnv):
    """Atari Breakout's rules: break the 18x6 wall with the ball, five lives.

    Observation: (118,) float32 in [-1, 1]: paddle x, paddle y, ball x, ball y, ball vx, ball
    vy, ball in play, score / 432, lives / 5, paddle width; then 108 bricks (1 standing),
    row-major from the top. Action: Discrete(3): stay, left, right. Reward: the points of the
    bricks broken in the step (7, 7, 4, 4, 1, 1 by row from the top).

    Example:
        >>> env = Breakout(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape
        (2, 118)
        >>> env.close()
    """

    c_name = "breakout"
    config_class = BreakoutConfig
    single_observation_space = spaces.Box(-1.0, 1.0, (10 + BRICKS,), np.float32)
    single_action_space = spaces.Discrete(3)
