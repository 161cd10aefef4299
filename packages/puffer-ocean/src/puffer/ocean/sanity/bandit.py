"""Bandit: a one-step multi-armed bandit, the smallest test that a trainer learns at all."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.ocean.sanity.base import SanityEnv

__all__ = ["Bandit"]


class Bandit(SanityEnv):
    """Pull one of `num_arms` arms; arm `best_arm` pays 1 with probability `win_prob`, every
    other arm with probability `lose_prob`. Every step is a whole (terminal) episode.

    Observation: (1,) float32, always 1. Action: Discrete(num_arms).
    A learned policy's mean reward tends to `win_prob`; uniform pulls average
    `(win_prob + (num_arms - 1) * lose_prob) / num_arms`.

    Example:
        >>> env = Bandit(num_envs=4)
        >>> obs, _ = env.reset(seed=0)
        >>> _, rewards, terminals, _, infos = env.step(np.zeros(4, np.int32))
        >>> rewards.shape, bool(terminals.all()), infos[0]["n"]
        ((4,), True, 4.0)
    """

    single_observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)

    def __init__(
        self,
        num_envs: int = 1,
        buf: Buffer | None = None,
        *,
        num_arms: int = 4,
        best_arm: int = 0,
        win_prob: float = 0.8,
        lose_prob: float = 0.2,
    ):
        if num_arms < 2 or not 0 <= best_arm < num_arms:
            raise APIUsageError(
                f"Bandit: num_arms={num_arms}, best_arm={best_arm}; expected num_arms >= 2 and "
                "0 <= best_arm < num_arms"
            )
        if not 0.0 <= lose_prob < win_prob <= 1.0:
            raise APIUsageError(
                f"Bandit: win_prob={win_prob}, lose_prob={lose_prob}; expected "
                "0 <= lose_prob < win_prob <= 1 so that one arm is best"
            )
        self.single_action_space = spaces.Discrete(num_arms)
        self.best_arm = best_arm
        self.win_prob = win_prob
        self.lose_prob = lose_prob
        super().__init__(num_envs, buf)

    def _start(self, rows: np.ndarray) -> None:
        self.observations[rows] = 1.0

    def _act(self) -> None:
        prob = np.where(self.actions == self.best_arm, self.win_prob, self.lose_prob)
        self.rewards[:] = self.rng.random(self.num_agents) < prob
        self.terminals[:] = True
        self.truncations[:] = False
