"""Procgen (Cobbe et al. 2020): 16 procedurally generated games, run in an interpreter of their own.

Procgen's wheels for Python 3.11 (procgen2 0.10.7, the same code as procgen-mirror) need
numpy < 2 and gym < 1, which the trainer cannot take, so the games run in workers of a venv of
their own (`puffer.vector.isolated`), built with uv the first time a game is made and cached.
The trainer knows the spaces without importing procgen: (64, 64, 3) uint8 frames, 15 actions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer
from puffer.envs._shipped import creator
from puffer.vector.isolated import Interpreter, IsolatedEnv, Launch

__all__ = ["DISTRIBUTION_MODES", "GAMES", "INTERPRETER", "ProcgenEnv"]

GAMES = (
    "bigfish",
    "bossfight",
    "caveflyer",
    "chaser",
    "climber",
    "coinrun",
    "dodgeball",
    "fruitbot",
    "heist",
    "jumper",
    "leaper",
    "maze",
    "miner",
    "ninja",
    "plunder",
    "starpilot",
)
DISTRIBUTION_MODES = ("easy", "hard", "extreme", "memory", "exploration")
# Procgen's pins; procgen2 pulls gym 0.26 and gym3, both fine with numpy 1.26.
INTERPRETER = Interpreter("procgen", ("procgen2==0.10.7", "numpy<2", "gym<1"))
_ADAPTER = str(Path(__file__).with_name("_procgen_adapter.py"))
# render() enlarges the 64x64 frame the agent sees by this factor.
RENDER_SCALE = 4


class ProcgenEnv(IsolatedEnv):
    """`num_envs` games of one Procgen game, stepped by Procgen's vector env in its own venv.

    Args:
        game: one of `GAMES`.
        num_envs: games stepped in one call (rows of the buffer).
        distribution_mode: `easy` (the paper's 25M-step setting), `hard`, `extreme`,
            `memory` or `exploration` (one level, for the games that have one).
        num_levels: levels to draw from (0: unlimited); with `start_level`, the train set.
        start_level: the first level seed.
        use_sequential_levels: go to the next level when one ends, instead of a random one.
        center_agent, use_backgrounds, restrict_themes, use_monochrome_assets,
            paint_vel_info: Procgen's rendering options, as named there.
        num_threads: Procgen's stepping threads per instance (0: the worker's own thread).
        seed: seed of the first reset without one (Procgen's `rand_seed`).
        render_mode: None or "rgb_array" (`render()` enlarges game 0's frame).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, 64, 64, 3) uint8. Actions: (num_envs,) int32 in [0, 15).
    """

    def __init__(
        self,
        game: str = "coinrun",
        *,
        num_envs: int = 64,
        distribution_mode: str = "easy",
        num_levels: int = 0,
        start_level: int = 0,
        use_sequential_levels: bool = False,
        center_agent: bool = True,
        use_backgrounds: bool = True,
        restrict_themes: bool = False,
        use_monochrome_assets: bool = False,
        paint_vel_info: bool = False,
        num_threads: int = 0,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        name = f"procgen-{game}"
        if game not in GAMES:
            raise APIUsageError(f"{name}: no Procgen game {game!r}; games: {', '.join(GAMES)}")
        if distribution_mode not in DISTRIBUTION_MODES:
            raise APIUsageError(
                f"{name}: distribution_mode={distribution_mode!r}; use one of "
                f"{', '.join(DISTRIBUTION_MODES)}"
            )
        if not isinstance(num_envs, int) or num_envs < 1:
            raise APIUsageError(f"{name}: num_envs={num_envs!r}; expected an int >= 1")
        if not isinstance(num_levels, int) or num_levels < 0:
            raise APIUsageError(f"{name}: num_levels={num_levels!r}; expected an int >= 0 (0: all)")
        if render_mode not in (None, "rgb_array"):
            raise APIUsageError(f"{name}: render_mode={render_mode!r}; use None or 'rgb_array'")
        options = {
            "game": game,
            "seed": int(seed),
            "distribution_mode": distribution_mode,
            "start_level": int(start_level),
            "use_sequential_levels": bool(use_sequential_levels),
            "center_agent": bool(center_agent),
            "use_backgrounds": bool(use_backgrounds),
            "restrict_themes": bool(restrict_themes),
            "use_monochrome_assets": bool(use_monochrome_assets),
            "paint_vel_info": bool(paint_vel_info),
            "num_threads": int(num_threads),
        }
        # Procgen refuses num_levels in exploration mode, which sets its own single level.
        if distribution_mode != "exploration":
            options["num_levels"] = num_levels
        self.render_mode = render_mode
        launch = Launch(INTERPRETER, _ADAPTER, "ProcgenInstance", tuple(sorted(options.items())))
        observation_space = spaces.Box(0, 255, (64, 64, 3), np.uint8)
        super().__init__(launch, observation_space, spaces.Discrete(15), num_envs, buf, name)

    def render(self) -> np.ndarray:
        """Game 0's current frame, (256, 256, 3) uint8: the agent's view enlarged."""
        frame = self.observations[0]
        return frame.repeat(RENDER_SCALE, axis=0).repeat(RENDER_SCALE, axis=1)


def _game(game: str):
    return creator(ProcgenEnv, "procgen", game=game)


bigfish = _game("bigfish")
bossfight = _game("bossfight")
caveflyer = _game("caveflyer")
chaser = _game("chaser")
climber = _game("climber")
coinrun = _game("coinrun")
dodgeball = _game("dodgeball")
fruitbot = _game("fruitbot")
heist = _game("heist")
jumper = _game("jumper")
leaper = _game("leaper")
maze = _game("maze")
miner = _game("miner")
ninja = _game("ninja")
plunder = _game("plunder")
starpilot = _game("starpilot")
