"""Continuous: steer a Box action onto a target, to test a trainer's continuous actions."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Continuous"]


class Continuous(SanityEnv):
    """Output the observed target: reward `-mean((clip(action, -1, 1) - target) ** 2)`. Every
    step is a whole (terminal) episode with a fresh uniform target in [-1, 1]^dims.

    Observation: (dims,) float32, the target. Action: Box(-1, 1, (dims,), float32); values
    outside are clipped. The best policy scores 0; uniform actions average -2/3.

    Example:
        >>> env = Continuous(num_envs=3, dims=2)
        >>> obs, _ = env.reset(seed=0)
        >>> env.step(obs.copy())[1].tolist()
        [-0.0, -0.0, -0.0]
    """

    def __init__(self, num_envs: int = 1, buf: Buffer | None = None, *, dims: int = 2):
        if dims < 1:
            raise APIUsageError(f"Continuous: dims is {dims}, expected >= 1")
        self.single_observation_space = spaces.Box(-1.0, 1.0, (dims,), np.float32)
        self.single_action_space = spaces.Box(-1.0, 1.0, (dims,), np.float32)
        super().__init__(num_envs, buf)

    def _start(self, rows: np.ndarray) -> None:
        shape = (int(rows.sum()), *self.single_observation_space.shape)
        self.observations[rows] = self.rng.uniform(-1.0, 1.0, shape)

    def _act(self) -> None:
        error = np.clip(self.actions, -1.0, 1.0) - self.observations
        self.rewards[:] = -np.mean(error * error, axis=1)
        self.terminals[:] = True
        self.truncations[:] = False
