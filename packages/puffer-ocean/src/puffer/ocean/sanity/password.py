"""Password: type a fixed bit string; the only reward is at the end, and only if all of it is
right. A test that a trainer explores and assigns credit under sparse reward."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Password"]


class Password(SanityEnv):
    """Enter a `length`-bit password one bit per step; reward 1 on the last step if every bit
    was right, else 0. Episodes are `length` steps and end in a terminal.

    The password is drawn once from `password_seed`, so it is the same in every copy and every
    episode (a policy can learn it); uniform random typing finds it with probability
    `2 ** -length` per episode.

    Observation: (length,) float32, one-hot of the position being typed.
    Action: Discrete(2), the bit.

    Example:
        >>> env = Password(num_envs=2, length=3)
        >>> obs, _ = env.reset(seed=0)
        >>> obs[0].tolist()
        [1.0, 0.0, 0.0]
        >>> for bit in env.password:
        ...     _, rewards, terminals, _, _ = env.step(np.full(2, bit, np.int32))
        >>> rewards.tolist(), terminals.tolist()
        ([1.0, 1.0], [True, True])
    """

    single_action_space = spaces.Discrete(2)

    def __init__(
        self,
        num_envs: int = 1,
        buf: Buffer | None = None,
        *,
        length: int = 5,
        password_seed: int = 0,
    ):
        if length < 1:
            raise APIUsageError(f"Password: length is {length}, expected >= 1")
        self.single_observation_space = spaces.Box(0.0, 1.0, (length,), np.float32)
        self.length = length
        self.password = np.random.default_rng(password_seed).integers(0, 2, length, np.int32)
        super().__init__(num_envs, buf)
        self._position = np.zeros(self.num_agents, np.int64)
        self._correct = np.ones(self.num_agents, bool)

    def _observe(self, rows: np.ndarray) -> None:
        self.observations[rows] = 0.0
        self.observations[rows, self._position[rows]] = 1.0

    def _start(self, rows: np.ndarray) -> None:
        self._position[rows] = 0
        self._correct[rows] = True
        self._observe(rows)

    def _act(self) -> None:
        self._correct &= self.actions == self.password[self._position]
        self._position += 1
        done = self._position == self.length
        self.rewards[:] = done & self._correct
        self.terminals[:] = done
        self.truncations[:] = False
        self._observe(~done)
