"""Cartpole, discrete and continuous (csrc/cartpole/cartpole.h): Gymnasium CartPole-v1 physics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gymnasium import spaces

from puffer.ocean.env import OceanEnv, check_positive

__all__ = ["Cartpole", "CartpoleConfig", "CartpoleContinuous"]

# CartPole-v1's observation bounds: twice the termination thresholds for x and theta.
_HIGH = np.array([4.8, np.inf, 0.41887903, np.inf], np.float32)


@dataclass(frozen=True)
class CartpoleConfig:
    """Cartpole settings.

    Attributes:
        max_steps: steps before an episode is truncated (500 as in CartPole-v1).
    """

    max_steps: int = 500

    def __post_init__(self) -> None:
        check_positive(self, "max_steps")


class Cartpole(OceanEnv):
    """Balance a pole on a cart: reward 1 per step until it falls or the cart leaves the track.

    Observation: (4,) float32: cart position, cart velocity, pole angle, pole angular velocity.
    Action: Discrete(2): push left, push right (10 N).

    Example:
        >>> env = Cartpole(num_envs=2)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape
        (2, 4)
        >>> env.close()
    """

    c_name = "cartpole"
    config_class = CartpoleConfig
    single_observation_space = spaces.Box(-_HIGH, _HIGH, dtype=np.float32)
    single_action_space = spaces.Discrete(2)


class CartpoleContinuous(Cartpole):
    """Cartpole with a continuous force: action Box(-1, 1, (1,)) float32 scales the 10 N push.

    Actions outside [-1, 1] (NaN included) are clipped in C.
    """

    c_name = "cartpole_continuous"
    single_action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
