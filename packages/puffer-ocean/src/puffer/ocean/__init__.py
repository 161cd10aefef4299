"""puffer.ocean: environments written in C, stepped in bulk over the buffer contract's arrays.

Every env is a `puffer.core.PufferEnv` holding `num_envs` C instances; `reset` and `step` run in
one C call each and write the bound arrays in place. `render()` returns an RGB uint8 frame drawn
by a small software rasterizer. Create envs directly or by name with `puffer.core.make`.

Example:
    >>> import puffer.core
    >>> env = puffer.core.make("squared", num_envs=8)
    >>> obs, _ = env.reset(seed=1)
    >>> obs.shape
    (8, 121)
    >>> env.close()
"""

from __future__ import annotations

from puffer.ocean._ocean import __version__
from puffer.ocean.breakout import Breakout, BreakoutConfig
from puffer.ocean.cartpole import Cartpole, CartpoleConfig, CartpoleContinuous
from puffer.ocean.connect4 import Connect4, Connect4Config
from puffer.ocean.env import OceanEnv
from puffer.ocean.g2048 import G2048, G2048Config
from puffer.ocean.memory import Memory, MemoryConfig
from puffer.ocean.pong import Pong, PongConfig
from puffer.ocean.render import frame_to_ansi, write_png
from puffer.ocean.snake import Snake, SnakeConfig
from puffer.ocean.squared import Squared, SquaredConfig
from puffer.ocean.target import Target, TargetConfig
from puffer.ocean.tetris import Tetris, TetrisConfig

__all__ = [
    "OceanEnv",
    "__version__",
    "Squared",
    "SquaredConfig",
    "Cartpole",
    "CartpoleConfig",
    "CartpoleContinuous",
    "Pong",
    "PongConfig",
    "Breakout",
    "BreakoutConfig",
    "Snake",
    "SnakeConfig",
    "Target",
    "TargetConfig",
    "Connect4",
    "Connect4Config",
    "G2048",
    "G2048Config",
    "Tetris",
    "TetrisConfig",
    "Memory",
    "MemoryConfig",
    "frame_to_ansi",
    "write_png",
]
