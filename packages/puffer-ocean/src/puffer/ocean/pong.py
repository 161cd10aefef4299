"""Pong against a scripted paddle (csrc/pong/pong.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv, check_positive

__all__ = ["Pong", "PongConfig"]


@dataclass(frozen=True)
class PongConfig:
    """Pong settings.

    Attributes:
        max_score: points (either side) that end the episode.
        max_steps: steps before an episode is truncated.
        frameskip: frames each action is repeated for.
    """

    max_score: int = 21
    max_steps: int = 10_000
    frameskip: int = 1

    def __post_init__(self) -> None:
        check_positive(self, "max_score", "max_steps", "frameskip")


class Pong(OceanEnv):
    """Right paddle against a scripted left paddle that chases the ball at a capped speed.

    Observation: (8,) float32 in [-1, 1]: own paddle y, opponent paddle y, ball x, ball y, ball
    vx, ball vy, own points and opponent points (fractions of max_score).
    Action: Discrete(3): stay, up, down. Reward +1 per point won, -1 per point lost.

    Example:
        >>> env = Pong(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape
        (2, 8)
        >>> env.close()
    """

    c_name = "pong"
    config_class = PongConfig
    single_observation_space = spaces.Box(-1.0, 1.0, (8,), np.float32)
    single_action_space = spaces.Discrete(3)
