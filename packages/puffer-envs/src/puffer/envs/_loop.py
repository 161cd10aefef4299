"""`LoopEnv`: `num_envs` single-game Python envs stepped in one loop, written into the buffer.

The families whose libraries step one game per object (MinAtar, MiniGrid, Crafter) share this
loop: it seeds game i with seed + i, auto-resets a game the step its episode ends (the row then
holds the new episode's first observation), sums each episode's return and length, and lets
the family add its own per-episode statistics. More cores come from puffer.vector's
Multiprocessing over several `LoopEnv`s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from puffer.core import APIUsageError, Buffer, PufferEnv

__all__ = ["LoopEnv"]


class LoopEnv(PufferEnv):
    """Base of the looped families. Subclasses set the two spaces, then call `super().__init__`
    and implement `_new_game`, `_reset_game` and `_step_game`.

    Attributes:
        games: the `num_envs` library objects, game i in row i.
        name: the env id, for messages.
    """

    name: str = "loop"

    def __init__(
        self,
        num_envs: int,
        seed: int,
        render_mode: str | None,
        buf: Buffer | None,
    ):
        if num_envs < 1:
            raise APIUsageError(f"{self.name}: num_envs={num_envs}; need at least 1")
        if render_mode not in (None, "rgb_array"):
            raise APIUsageError(
                f"{self.name}: render_mode={render_mode!r}; use None or 'rgb_array'"
            )
        self.num_agents = num_envs
        self.render_mode = render_mode
        super().__init__(buf)
        self._seed = seed
        self.games = [self._new_game(i) for i in range(num_envs)]
        self._returns = np.zeros(num_envs, np.float64)
        self._lengths = np.zeros(num_envs, np.int64)

    # Family hooks ---------------------------------------------------------------------------

    def _new_game(self, index: int) -> Any:
        """Create game `index` (not yet reset)."""
        raise NotImplementedError

    def _reset_game(self, index: int, seed: int | None) -> Any:
        """Reset game `index` (seeded when `seed` is not None); return its observation."""
        raise NotImplementedError

    def _step_game(self, index: int, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Step game `index`: `(obs, reward, terminated, truncated, episode_extras)`.

        `episode_extras` holds statistics to report when this step ends the episode.
        """
        raise NotImplementedError

    # PufferEnv -------------------------------------------------------------------------------

    def _reset(self, seed: int | None) -> list[dict[str, Any]]:
        if seed is None:
            seed = self._seed
        for i in range(self.num_agents):
            self.observations[i] = self._reset_game(i, seed + i)
        self.rewards[...] = 0
        self.terminals[...] = False
        self.truncations[...] = False
        self.masks[...] = True
        self._returns[...] = 0
        self._lengths[...] = 0
        return []

    def _step(self) -> list[dict[str, Any]]:
        infos = []
        # Python ints per game: cheaper to hand to a Python library than numpy scalars.
        actions = self.actions.tolist()
        observations, rewards = self.observations, self.rewards
        terminals, truncations = self.terminals, self.truncations
        for i, action in enumerate(actions):
            obs, reward, terminated, truncated, extras = self._step_game(i, action)
            self._returns[i] += reward
            self._lengths[i] += 1
            if terminated or truncated:
                infos.append(
                    {
                        "episode_return": float(self._returns[i]),
                        "episode_length": float(self._lengths[i]),
                        **extras,
                    }
                )
                self._returns[i] = 0
                self._lengths[i] = 0
                obs = self._reset_game(i, None)
            observations[i] = obs
            rewards[i] = reward
            terminals[i] = terminated
            truncations[i] = truncated
        return infos

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, num_envs={self.num_agents})"
