"""MiniGrid (Farama): partially observed gridworlds with keys, doors and goals.

The usual PPO setup for single-task MiniGrid (as in the rl-starter-files baselines): the
agent's 7x7 egocentric view of (object, colour, state) indices, channels first; the mission
string is dropped (one task per env id) and the facing direction too (the view is already
egocentric). Rewards are MiniGrid's own: 1 - 0.9 * steps / max_steps on success, else 0.
Episodes end at the goal (terminal) or at MiniGrid's step limit (truncation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.envs._family import FAMILIES
from puffer.envs._loop import LoopEnv
from puffer.envs._shipped import creator

__all__ = ["MiniGridEnv"]


class MiniGridEnv(LoopEnv):
    """`num_envs` copies of one MiniGrid task.

    Args:
        task: a MiniGrid Gymnasium id, e.g. `"MiniGrid-DoorKey-5x5-v0"`.
        num_envs: envs stepped in one call (rows of the buffer).
        seed: seed of the first `reset()` called without one (env i gets seed + i).
        render_mode: None or "rgb_array" (`render()` draws env 0's whole grid).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, 3, 7, 7) uint8 (object, colour and state indices of the view).
    Actions: (num_envs,) int32 in [0, 7). Each finished episode reports `success` (1 when it
    reached the goal) beside its return and length.

    Example:
        >>> env = MiniGridEnv("MiniGrid-DoorKey-5x5-v0", num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((2, 3, 7, 7), dtype('uint8'), Discrete(7))
    """

    def __init__(
        self,
        task: str = "MiniGrid-DoorKey-5x5-v0",
        *,
        num_envs: int = 1,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        self.name = "minigrid-" + task.removeprefix("MiniGrid-").removesuffix("-v0").lower()
        FAMILIES["minigrid"].require(self.name)
        import gymnasium
        import minigrid  # noqa: F401  (registers the MiniGrid ids with Gymnasium)

        self._task = task
        self._make = gymnasium.make
        probe = gymnasium.make(task, disable_env_checker=True)
        height, width, channels = probe.observation_space["image"].shape
        # Index bounds: MiniGrid's object/colour/state tables are all below 11.
        self.single_observation_space = spaces.Box(0, 255, (channels, height, width), np.uint8)
        self.single_action_space = spaces.Discrete(int(probe.action_space.n))
        probe.close()
        super().__init__(num_envs, seed, render_mode, buf)

    def _new_game(self, index: int) -> Any:
        return self._make(self._task, render_mode=self.render_mode, disable_env_checker=True)

    def _reset_game(self, index: int, seed: int | None) -> np.ndarray:
        obs, _ = self.games[index].reset(seed=seed)
        return obs["image"].transpose(2, 0, 1)

    def _step_game(self, index: int, action: int) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, _ = self.games[index].step(action)
        extras = {"success": float(reward > 0)} if terminated or truncated else {}
        return obs["image"].transpose(2, 0, 1), float(reward), terminated, truncated, extras

    def render(self) -> np.ndarray:
        """Env 0's whole grid as RGB (H, W, 3) uint8, as MiniGrid draws it."""
        if self.render_mode != "rgb_array":
            raise APIUsageError(f"{self}: render() needs render_mode='rgb_array' at creation")
        return self.games[0].render()

    def close(self) -> None:
        if not self.closed:
            for game in self.games:
                game.close()
        super().close()


doorkey_5x5 = creator(MiniGridEnv, "minigrid", task="MiniGrid-DoorKey-5x5-v0")
doorkey_8x8 = creator(MiniGridEnv, "minigrid", task="MiniGrid-DoorKey-8x8-v0")
empty_5x5 = creator(MiniGridEnv, "minigrid", task="MiniGrid-Empty-5x5-v0")
fourrooms = creator(MiniGridEnv, "minigrid", task="MiniGrid-FourRooms-v0")
keycorridor_s3r1 = creator(MiniGridEnv, "minigrid", task="MiniGrid-KeyCorridorS3R1-v0")
memory_s7 = creator(MiniGridEnv, "minigrid", task="MiniGrid-MemoryS7-v0")
