"""Many snakes on one grid (csrc/snake/snake.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError
from puffer.ocean.env import OceanEnv, check_positive

__all__ = ["Snake", "SnakeConfig"]

VIEW = 11  # cells per side of the local view centred on the head


@dataclass(frozen=True)
class SnakeConfig:
    """Snake settings.

    Attributes:
        width: playable cells per row.
        height: playable rows.
        num_snakes: snakes (agents) per env instance.
        num_food: food cells kept on the grid (eaten food reappears elsewhere).
        max_length: cells at which a snake stops growing.
        max_steps: steps of one snake's episode before it is truncated.
        reward_food: reward per food or corpse cell eaten.
        reward_death: reward on hitting a wall or a snake.
    """

    width: int = 48
    height: int = 48
    num_snakes: int = 16
    num_food: int = 32
    max_length: int = 64
    max_steps: int = 1_000
    reward_food: float = 0.1
    reward_death: float = -1.0

    def __post_init__(self) -> None:
        check_positive(self, "width", "height", "num_snakes", "num_food", "max_length")
        check_positive(self, "max_steps")
        cells, needed = self.width * self.height, self.num_snakes * self.max_length + self.num_food
        if needed >= cells:
            raise APIUsageError(
                f"SnakeConfig: num_snakes * max_length + num_food = {needed} must be below the "
                f"{cells} cells of a {self.width}x{self.height} grid; enlarge it or shorten snakes"
            )


class Snake(OceanEnv):
    """`num_snakes` snakes per instance share a grid with food; each snake is one agent.

    A snake grows by eating, dies (terminal, reward_death) on a wall or any snake body, leaves
    its body as food and respawns at once. Observation: (121,) int8, the 11x11 cells around the
    head: 0 empty, 1 food, 2 corpse, 3 wall, 4 snake. Action: Discrete(4): up, down, left, right.

    Example:
        >>> env = Snake(num_envs=2, num_snakes=4)
        >>> env.num_agents
        8
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype
        ((8, 121), dtype('int8'))
        >>> env.close()
    """

    c_name = "snake"
    config_class = SnakeConfig
    single_observation_space = spaces.Box(0, 4, (VIEW * VIEW,), np.int8)
    single_action_space = spaces.Discrete(4)

    @classmethod
    def agents_per_env(cls, config: SnakeConfig) -> int:
        """One agent per snake."""
        return config.num_snakes
