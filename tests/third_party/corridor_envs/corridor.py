"""Walk right along a corridor: reward 1 at its end, which ends the episode."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces


class Corridor(gymnasium.Env):
    """Observation: the one-hot position (float32); actions: 0 left, 1 right."""

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self, length: int = 4):
        self.length = length
        self.observation_space = spaces.Box(0.0, 1.0, (length,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.position = 0

    def _obs(self) -> np.ndarray:
        return np.eye(self.length, dtype=np.float32)[self.position]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        super().reset(seed=seed)
        self.position = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple:
        move = 1 if int(action) == 1 else -1
        self.position = min(max(self.position + move, 0), self.length - 1)
        arrived = self.position == self.length - 1
        return self._obs(), float(arrived), arrived, False, {}
