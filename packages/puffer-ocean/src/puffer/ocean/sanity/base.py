"""`SanityEnv`: the shared bookkeeping of the Python sanity envs.

A sanity env holds `num_envs` independent copies of a tiny task, each `agents_per_env` rows of
the buffer, and steps them all with numpy in one call. Subclasses write only the task: which
observation starts an episode (`_start`) and what one step does (`_act`); seeding, episode
returns and lengths, auto-reset and the episode infos live here.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from puffer.core import APIUsageError, Buffer, PufferEnv, Vectorization

__all__ = ["SanityEnv"]

Infos = list[dict[str, Any]]


class SanityEnv(PufferEnv):
    """Base class of the sanity envs: `num_envs` copies of one task over one buffer.

    Rows are laid out env by env: env i owns rows `[i * agents_per_env, (i + 1) *
    agents_per_env)`. Every agent of an env starts and ends its episodes together.

    Args:
        num_envs: copies of the task, stepped together.
        buf: arrays to write into (`num_envs * agents_per_env` rows); allocated when None.

    `step` returns `[{"episode_return": mean, "episode_length": mean, "n": count}]` over the
    agents whose episode ended on that step, and `[]` when none did.
    """

    agents_per_env: ClassVar[int] = 1
    vectorization = Vectorization.NATIVE  # `num_envs` copies over one buffer

    def __init__(self, num_envs: int = 1, buf: Buffer | None = None):
        name = type(self).__name__
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer):
            raise APIUsageError(f"{name}: num_envs is {num_envs!r}, expected an int >= 1")
        if num_envs < 1:
            raise APIUsageError(f"{name}: num_envs is {num_envs}, expected an int >= 1")
        self.num_envs = int(num_envs)
        self.num_agents = self.num_envs * self.agents_per_env
        super().__init__(buf)
        self.masks[:] = True
        self.rng: np.random.Generator | None = None
        self._episode_return = np.zeros(self.num_agents, np.float64)
        self._episode_length = np.zeros(self.num_agents, np.int64)

    # Task hooks ------------------------------------------------------------------------------

    def _start(self, rows: np.ndarray) -> None:
        """Begin new episodes on the rows where `rows` (bool, (num_agents,)) is True: draw the
        task from `self.rng` and write those rows' first observations."""
        raise NotImplementedError

    def _act(self) -> None:
        """Apply `self.actions` to every row: write rewards, terminals, truncations and the
        next observations (rows that end are overwritten by `_start` afterwards)."""
        raise NotImplementedError

    # PufferEnv hooks -------------------------------------------------------------------------

    def _reset(self, seed: int | None) -> Infos:
        # A seed restarts the stream; without one, the first reset draws from the OS and later
        # resets continue the same stream.
        if seed is not None or self.rng is None:
            self.rng = np.random.default_rng(seed)
        self.rewards[:] = 0.0
        self.terminals[:] = False
        self.truncations[:] = False
        self._episode_return[:] = 0.0
        self._episode_length[:] = 0
        self._start(np.ones(self.num_agents, bool))
        return []

    def _step(self) -> Infos:
        self._act()
        self._episode_return += self.rewards
        self._episode_length += 1
        done = self.terminals | self.truncations
        if not done.any():
            return []
        info = {
            "episode_return": float(self._episode_return[done].mean()),
            "episode_length": float(self._episode_length[done].mean()),
            "n": float(done.sum()),
        }
        self._episode_return[done] = 0.0
        self._episode_length[done] = 0
        self._start(done)
        return [info]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs}, num_agents={self.num_agents})"
