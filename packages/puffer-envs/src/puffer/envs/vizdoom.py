"""ViZDoom: first-person Doom scenarios through the library's own Gymnasium wrapper.

The `Vizdoom<Scenario>-v1` envs with their scenario rewards and time limits, one button per
action (a Discrete space), frame skip 4 (each action repeated 4 tics, rewards summed, as in
the ViZDoom papers' agents). The observation is the 240x320 RGB screen sampled every 4th
pixel, (60, 80, 3) uint8, for a NatureCNN; the game variables (health, ammo) are dropped.
A scenario's timeout is a truncation, the player's death or the goal a terminal.
"""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer
from puffer.envs._family import FAMILIES
from puffer.envs._loop import LoopEnv
from puffer.envs._shipped import creator

__all__ = ["FRAME_SKIP", "SCREEN_STRIDE", "VizDoomEnv"]

FRAME_SKIP = 4  # game tics per agent action
SCREEN_STRIDE = 4  # the 240x320 screen is sampled every SCREEN_STRIDE-th row and column


class VizDoomEnv(LoopEnv):
    """`num_envs` games of one ViZDoom scenario.

    Args:
        scenario: the Gymnasium id's scenario, e.g. `"Basic"` or `"DefendCenter"`.
        num_envs: games stepped in one call (rows of the buffer).
        seed: seed of the first `reset()` called without one (game i gets seed + i).
        render_mode: None or "rgb_array" (`render()` returns game 0's full 240x320 screen).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, 60, 80, 3) uint8. Actions: (num_envs,) int32, one per button.

    Example:
        >>> env = VizDoomEnv("Basic", num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((2, 60, 80, 3), dtype('uint8'), Discrete(4))
        >>> env.close()
    """

    def __init__(
        self,
        scenario: str = "Basic",
        *,
        num_envs: int = 1,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        self.name = "vizdoom-" + "".join(
            f"-{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(scenario)
        )
        FAMILIES["vizdoom"].require(self.name)
        self._id = f"Vizdoom{scenario}-v1"
        # The engine writes its ini, screenshots and saves into the working directory unless
        # told otherwise; they go to a directory of this env's (it leaves an empty _vizdoom/).
        self._files = tempfile.TemporaryDirectory(prefix="puffer-vizdoom-")
        probe = self._make()
        height, width, channels = probe.observation_space["screen"].shape
        self.single_observation_space = spaces.Box(
            0,
            255,
            (-(-height // SCREEN_STRIDE), -(-width // SCREEN_STRIDE), channels),
            np.uint8,
        )
        self.single_action_space = spaces.Discrete(int(probe.action_space.n))
        probe.close()
        self._screen: np.ndarray | None = None
        super().__init__(num_envs, seed, render_mode, buf)

    def _make(self) -> Any:
        import gymnasium
        from vizdoom import gymnasium_wrapper  # noqa: F401  (registers the Vizdoom ids)

        files = self._files.name
        return gymnasium.make(
            self._id,
            frame_skip=FRAME_SKIP,
            doom_config_path=f"{files}/vizdoom.ini",
            game_args=f"+screenshot_dir {files}/screenshots -savedir {files}/saves",
        ).unwrapped

    def _new_game(self, index: int) -> Any:
        return self._make()

    def _observe(self, index: int, obs: dict[str, np.ndarray]) -> np.ndarray:
        screen = obs["screen"]
        if index == 0 and self.render_mode == "rgb_array":
            self._screen = screen.copy()
        return screen[::SCREEN_STRIDE, ::SCREEN_STRIDE]

    def _reset_game(self, index: int, seed: int | None) -> np.ndarray:
        obs, _ = self.games[index].reset(seed=seed)
        return self._observe(index, obs)

    def _step_game(self, index: int, action: int) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, _ = self.games[index].step(action)
        return self._observe(index, obs), reward, terminated, truncated, {}

    def render(self) -> np.ndarray:
        """Game 0's last screen, (240, 320, 3) uint8."""
        if self._screen is None:
            raise RuntimeError(f"{self.name}: render() needs render_mode='rgb_array' and reset()")
        return self._screen

    def close(self) -> None:
        for game in self.games:
            game.close()
        self._files.cleanup()
        super().close()


basic = creator(VizDoomEnv, "vizdoom", scenario="Basic")
defend_center = creator(VizDoomEnv, "vizdoom", scenario="DefendCenter")
defend_line = creator(VizDoomEnv, "vizdoom", scenario="DefendLine")
health_gathering = creator(VizDoomEnv, "vizdoom", scenario="HealthGathering")
deadly_corridor = creator(VizDoomEnv, "vizdoom", scenario="DeadlyCorridor")
my_way_home = creator(VizDoomEnv, "vizdoom", scenario="MyWayHome")
take_cover = creator(VizDoomEnv, "vizdoom", scenario="TakeCover")
