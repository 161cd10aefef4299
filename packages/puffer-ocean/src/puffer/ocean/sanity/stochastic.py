"""Stochastic: a task whose best memoryless policy is stochastic, to test that a trainer does
not collapse its action distribution."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Stochastic"]


class Stochastic(SanityEnv):
    """Take action 0 on a fraction `p` of `horizon` steps. The observation never changes, so a
    memoryless policy can only match `p` by sampling action 0 with probability `p`.

    The last step of an episode pays `1 - |f - p| / max(p, 1 - p)`, with f the fraction of
    action 0 in the episode, and terminates; other steps pay 0. With the defaults (p=0.75,
    horizon=32) always choosing action 0 earns 0.67, sampling with probability p about 0.9.

    Observation: (1,) float32, always 0. Action: Discrete(2).

    Example:
        >>> env = Stochastic(num_envs=1, p=0.5, horizon=2)
        >>> _ = env.reset(seed=0)
        >>> _ = env.step(np.zeros(1, np.int32))
        >>> env.step(np.ones(1, np.int32))[1].tolist()
        [1.0]
    """

    single_observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
    single_action_space = spaces.Discrete(2)

    def __init__(
        self, num_envs: int = 1, buf: Buffer | None = None, *, p: float = 0.75, horizon: int = 32
    ):
        if not 0.0 < p < 1.0 or horizon < 1:
            raise APIUsageError(
                f"Stochastic: p={p}, horizon={horizon}; expected 0 < p < 1 and horizon >= 1"
            )
        self.p = p
        self.horizon = horizon
        super().__init__(num_envs, buf)
        self._zeros_taken = np.zeros(self.num_agents, np.int64)
        self._tick = np.zeros(self.num_agents, np.int64)

    def _start(self, rows: np.ndarray) -> None:
        self.observations[rows] = 0.0
        self._zeros_taken[rows] = 0
        self._tick[rows] = 0

    def _act(self) -> None:
        self._zeros_taken += self.actions == 0
        self._tick += 1
        done = self._tick == self.horizon
        fraction = self._zeros_taken / self.horizon
        score = 1.0 - np.abs(fraction - self.p) / max(self.p, 1.0 - self.p)
        self.rewards[:] = np.where(done, score, 0.0)
        self.terminals[:] = done
        self.truncations[:] = False
