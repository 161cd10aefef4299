"""Multiagent: two agents per env that must act differently, to test that a trainer keeps
agents' rows apart."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Multiagent"]


class Multiagent(SanityEnv):
    """Two agents per env: agent 0 is paid 1 for action 0, agent 1 for action 1, else 0.
    Every step is a whole (terminal) episode for both.

    Observation: (2,) float32, one-hot of the agent's index. Action: Discrete(2).
    Rows alternate agent 0, agent 1, env by env. A policy that reads its index scores 1; one
    that ignores it scores 0.5.

    Example:
        >>> env = Multiagent(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.tolist()
        [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
        >>> env.step(np.array([0, 1, 1, 1], np.int32))[1].tolist()
        [1.0, 1.0, 0.0, 1.0]
    """

    agents_per_env = 2
    single_observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
    single_action_space = spaces.Discrete(2)

    def __init__(self, num_envs: int = 1, buf: Buffer | None = None):
        super().__init__(num_envs, buf)
        self._agent = np.arange(self.num_agents) % self.agents_per_env

    def _start(self, rows: np.ndarray) -> None:
        self.observations[rows] = np.eye(self.agents_per_env, dtype=np.float32)[self._agent[rows]]

    def _act(self) -> None:
        self.rewards[:] = self.actions == self._agent
        self.terminals[:] = True
        self.truncations[:] = False
