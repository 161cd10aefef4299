"""Target: eight agents per instance steer to goals in an arena (csrc/target/target.h)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv

__all__ = ["Target", "TargetConfig"]

AGENTS = 8


@dataclass(frozen=True)
class TargetConfig:
    """Target settings.

    Attributes:
        max_steps: steps per episode; every episode ends in truncation after this many.
    """

    max_steps: int = 256


class Target(OceanEnv):
    """Eight agents per instance turn and move to collect four goals; +1 per goal touched.

    Observation: (28,) float32 in [-1, 1]: own position (2), heading cos/sin (2), speed (1),
    offsets to the 4 goals (8) and to the 7 other agents (14), episode progress (1).
    Action: MultiDiscrete([9, 5]): turn rate, speed.

    Example:
        >>> env = Target(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((16, 28), MultiDiscrete([9 5]))
        >>> env.close()
    """

    c_name = "target"
    config_class = TargetConfig
    single_observation_space = spaces.Box(-1.0, 1.0, (28,), np.float32)
    single_action_space = spaces.MultiDiscrete([9, 5])

    @classmethod
    def agents_per_env(cls, config: Any) -> int:
        return AGENTS
