"""MinAtar (Young & Tian 2019): five Atari games on a 10x10 grid, one channel per object kind.

Settings of the MinAtar paper: sticky actions with probability 0.1, difficulty ramping on,
all 6 actions. Observations are the game's boolean channels as uint8 0/1, channels first.
The games have no time limit of their own; `max_episode_steps` truncates (a good Breakout
agent can otherwise play forever).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.envs._family import FAMILIES
from puffer.envs._loop import LoopEnv
from puffer.envs._shipped import creator

__all__ = ["GAMES", "RENDER_SCALE", "MinAtarEnv"]

GAMES = ("asterix", "breakout", "freeway", "seaquest", "space_invaders")

# render() draws each grid cell as a square of this many pixels.
RENDER_SCALE = 16
# Every MinAtar game takes the same 6 actions (no-op, left, up, right, down, fire).
NUM_ACTIONS = 6
# Per-channel colours for render() (cycled past 10 channels); black background.
_PALETTE = np.array(
    [
        [230, 25, 75],
        [60, 180, 75],
        [255, 225, 25],
        [0, 130, 200],
        [245, 130, 48],
        [145, 30, 180],
        [70, 240, 240],
        [240, 50, 230],
        [210, 245, 60],
        [250, 190, 212],
    ],
    np.uint8,
)


@functools.cache
def _game_class(game: str) -> type:
    """MinAtar's `Env` class of `game`, loaded from its file.

    The game modules are plain numpy, but `import minatar` first imports matplotlib and
    seaborn for its display window (8 s on our 2-core machine, in every worker process), so
    the module is loaded alone.
    """
    spec = importlib.util.find_spec("minatar")  # locates the package without running it
    path = Path(spec.origin).parent / "environments" / f"{game}.py"
    module_spec = importlib.util.spec_from_file_location(f"_puffer_minatar_{game}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.Env


class _StickyGame:
    """One MinAtar game with the sticky actions of minatar's `Environment` wrapper: the
    previous action repeats with probability `sticky`, drawn from the game's own generator."""

    __slots__ = ("game", "last_action", "sticky")

    def __init__(self, game: Any, sticky: float):
        self.game, self.sticky, self.last_action = game, sticky, 0

    def act(self, action: int) -> tuple[float, bool]:
        if self.game.random.rand() < self.sticky:
            action = self.last_action
        self.last_action = action
        return self.game.act(action)


class MinAtarEnv(LoopEnv):
    """`num_envs` MinAtar games of one kind.

    Args:
        game: `breakout`, `asterix`, `freeway`, `seaquest` or `space_invaders`.
        num_envs: games stepped in one call (rows of the buffer).
        sticky_action_prob: probability of repeating the previous action.
        difficulty_ramping: games speed up as they go (the paper's setting).
        max_episode_steps: steps before an episode is truncated.
        seed: seed of the first `reset()` called without one (game i gets seed + i).
        render_mode: None or "rgb_array" (`render()` draws game 0).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, C, 10, 10) uint8 in {0, 1} (C = 4 for breakout, up to 10).
    Actions: (num_envs,) int32 in [0, 6).

    Example:
        >>> env = MinAtarEnv("breakout", num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((2, 4, 10, 10), dtype('uint8'), Discrete(6))
    """

    def __init__(
        self,
        game: str = "breakout",
        *,
        num_envs: int = 1,
        sticky_action_prob: float = 0.1,
        difficulty_ramping: bool = True,
        max_episode_steps: int = 10_000,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        self.name = f"minatar-{game.replace('_', '-')}"
        FAMILIES["minatar"].require(self.name)
        if game not in GAMES:
            raise APIUsageError(f"{self.name}: no MinAtar game {game!r}; games: {', '.join(GAMES)}")
        self._game_class = _game_class(game)
        self._sticky, self._ramping = sticky_action_prob, difficulty_ramping
        self._max_steps = max_episode_steps
        height, width, channels = self._game_class(ramping=difficulty_ramping).state_shape()
        self.single_observation_space = spaces.Box(0, 1, (channels, height, width), np.uint8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        super().__init__(num_envs, seed, render_mode, buf)
        self._steps = np.zeros(num_envs, np.int64)

    def _new_game(self, index: int) -> Any:
        return _StickyGame(self._game_class(ramping=self._ramping), self._sticky)

    def _reset_game(self, index: int, seed: int | None) -> np.ndarray:
        sticky = self.games[index]
        if seed is not None:
            sticky.game.random = np.random.RandomState(seed)
        sticky.game.reset()
        sticky.last_action = 0
        self._steps[index] = 0
        return sticky.game.state().transpose(2, 0, 1)

    def _step_game(self, index: int, action: int) -> tuple[Any, float, bool, bool, dict]:
        sticky = self.games[index]
        reward, terminated = sticky.act(action)
        self._steps[index] += 1
        truncated = not terminated and self._steps[index] >= self._max_steps
        obs = sticky.game.state().transpose(2, 0, 1)
        return obs, float(reward), bool(terminated), bool(truncated), {}

    def render(self) -> np.ndarray:
        """Game 0 as RGB, (160, 160, 3) uint8: each channel's cells in its own colour."""
        state = self.observations[0].astype(bool)
        frame = np.zeros((*state.shape[1:], 3), np.uint8)
        for channel, cells in enumerate(state):
            frame[cells] = _PALETTE[channel % len(_PALETTE)]
        return frame.repeat(RENDER_SCALE, axis=0).repeat(RENDER_SCALE, axis=1)


breakout = creator(MinAtarEnv, "minatar", game="breakout")
asterix = creator(MinAtarEnv, "minatar", game="asterix")
freeway = creator(MinAtarEnv, "minatar", game="freeway")
seaquest = creator(MinAtarEnv, "minatar", game="seaquest")
space_invaders = creator(MinAtarEnv, "minatar", game="space_invaders")
