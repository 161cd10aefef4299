"""NetHack through the NetHack Learning Environment (nle, Küttler et al. 2020).

The NLE tasks as the library defines them (`NetHackScore-v0`: reward = in-game score gained,
-0.01 for an action that does not advance the game clock; `NetHackStaircase-v0`: +1 for going
down the stairs), the 23 actions of those tasks and nle's own 5,000-step episode limit (a
truncation). The observation is the structured part the NLE baselines encode: the 21x79 map of
glyph ids, the 27 bottom-line statistics (blstats: position, HP, depth, score, ...) and the
256-byte message line, packed into one byte row (`obs_layout`) that
`puffer.envs.nethack_encoder.NetHackEncoder` reads back. Each finished episode reports the
game's `score`, the deepest `depth` reached and the in-game `turns` beside return and length.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer, nativize, observation_layout
from puffer.core.emulation import row_space
from puffer.envs._family import FAMILIES
from puffer.envs._loop import LoopEnv
from puffer.envs._shipped import creator

__all__ = ["OBS_KEYS", "NetHackEnv"]

# The observation keys kept, in row order (the NLE baselines' glyphs + blstats + message).
OBS_KEYS = ("glyphs", "blstats", "message")


class NetHackEnv(LoopEnv):
    """`num_envs` NetHack games of one NLE task.

    Args:
        task: the nle task class name, e.g. `"NetHackScore"` or `"NetHackStaircase"`.
        num_envs: games stepped in one call (rows of the buffer).
        max_episode_steps: agent steps before an episode is truncated (nle's default 5,000).
        seed: seed of the first `reset()` called without one. Game i's first episode uses
            NetHack seeds derived from seed + i; later episodes draw theirs from a generator
            seeded the same way, so a seeded run replays exactly.
        render_mode: None or "rgb_array" (`render()` draws game 0 with NetHack's tiles,
            (336, 1264, 3) uint8).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, 3792) uint8 rows; `nativize(rows, env.obs_layout)` gives
    `glyphs` (num_envs, 21, 79) int16, `blstats` (num_envs, 27) int64 and `message`
    (num_envs, 256) uint8. Actions: (num_envs,) int32 in [0, 23).

    Example:
        >>> from puffer.core import nativize
        >>> env = NetHackEnv(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> parts = nativize(obs, env.obs_layout)
        >>> parts["glyphs"].shape, parts["blstats"].dtype, env.single_action_space
        ((2, 21, 79), dtype('int64'), Discrete(23))
    """

    def __init__(
        self,
        task: str = "NetHackScore",
        *,
        num_envs: int = 1,
        max_episode_steps: int = 5000,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        self.name = "nethack-" + task.removeprefix("NetHack").lower()
        FAMILIES["nethack"].require(self.name)
        from nle import nethack
        from nle.env import tasks

        self._task = getattr(tasks, task)
        self._max_episode_steps = max_episode_steps
        self._blstat = (nethack.NLE_BL_SCORE, nethack.NLE_BL_DEPTH, nethack.NLE_BL_TIME)
        probe = self._task(observation_keys=OBS_KEYS, max_episode_steps=max_episode_steps)
        self._layout = observation_layout(
            spaces.Dict([(key, probe.observation_space[key]) for key in OBS_KEYS])
        )
        self.single_observation_space = row_space(self._layout)
        self.single_action_space = spaces.Discrete(probe.action_space.n)
        probe.close()
        self._rngs: list[np.random.Generator | None] = [None] * num_envs
        super().__init__(num_envs, seed, render_mode, buf)
        self.obs_layout = self._layout
        self._views = nativize(self.observations, self._layout)
        # Per game: the best score, deepest level and last turn seen this episode (blstats go
        # to zero once the game is over, so the final observation cannot be read for them).
        self._progress = np.zeros((num_envs, 3), np.int64)

    def _new_game(self, index: int) -> Any:
        mode = "pixel" if self.render_mode == "rgb_array" and index == 0 else "human"
        return self._task(
            observation_keys=OBS_KEYS,
            max_episode_steps=self._max_episode_steps,
            render_mode=mode,
        )

    def _write(self, index: int, obs: dict[str, np.ndarray]) -> np.ndarray:
        for key in OBS_KEYS:
            self._views[key][index] = obs[key]
        stats = obs["blstats"][list(self._blstat)]
        if stats.any():
            np.maximum(self._progress[index], stats, out=self._progress[index])
        return self.observations[index]

    def _reset_game(self, index: int, seed: int | None) -> np.ndarray:
        if seed is not None:
            self._rngs[index] = np.random.default_rng(seed)
        core, disp = (int(s) for s in self._rngs[index].integers(0, 2**63 - 1, 2))
        self.games[index].seed(core=core, disp=disp, reseed=False)
        obs, _ = self.games[index].reset()
        self._progress[index] = 0
        return self._write(index, obs)

    def _step_game(self, index: int, action: int) -> tuple[Any, float, bool, bool, dict]:
        game = self.games[index]
        obs, reward, done, _, info = game.step(action)
        row = self._write(index, obs)
        if not done:
            return row, reward, False, False, {}
        # nle's own truncated flag is computed before it counts the step, so it is False on
        # the step that hits the limit; its end status says ABORTED there.
        truncated = info["end_status"] == game.StepStatus.ABORTED
        score, depth, turns = (float(v) for v in self._progress[index])
        return (
            row,
            reward,
            not truncated,
            truncated,
            {
                "score": score,
                "depth": depth,
                "turns": turns,
            },
        )

    def render(self) -> np.ndarray:
        """Game 0 drawn with NetHack's tiles, (336, 1264, 3) uint8."""
        return self.games[0].render().copy()

    def close(self) -> None:
        for game in self.games:
            game.close()
        super().close()


nethack_score = creator(NetHackEnv, "nethack", task="NetHackScore")
nethack_staircase = creator(NetHackEnv, "nethack", task="NetHackStaircase")
