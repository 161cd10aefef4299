"""PettingZoo butterfly: cooperative multi-agent games, one buffer row per agent.

- `butterfly-pistonball`: 20 pistons push a ball left, with the preprocessing of PettingZoo's
  own PPO tutorial (SuperSuit's blue-channel colour reduction, 84x84 resize, 3 stacked
  frames), written here with numpy: the resize samples the nearest pixel. Discrete actions
  (down, stay, up).
- `butterfly-kaz` (knights-archers-zombies): the vector observation (27 entities x 5
  features per agent) fed to an MLP; agents that die stay as masked rows until the episode
  ends.

Both go through `puffer.core.PettingZooPufferEnv` (padding, masks, auto-reset, episode stats).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer, Vectorization
from puffer.envs._family import FAMILIES
from puffer.envs._shipped import creator

__all__ = [
    "PISTONBALL_SIZE",
    "PISTONBALL_STACK",
    "make_knights_archers_zombies",
    "make_pistonball",
]

PISTONBALL_SIZE = 84  # square side of a preprocessed observation, in pixels
PISTONBALL_STACK = 3  # frames stacked per observation


def _pistonball_frames(aec_env: Any, size: int, stack: int) -> Any:
    """Pistonball as a ParallelEnv whose observations are each agent's view reduced to its
    blue channel, resized to (size, size) by nearest-pixel sampling and stacked over `stack`
    steps, channels first: (stack, size, size) uint8.

    PettingZoo's own parallel conversion reads every agent's view twice per step, and each
    read copies a 457x120 crop of the screen: three quarters of a step. Here its conversion
    still drives the cycle, but pistonball's `observe` is skipped and all agents' frames come
    from one gather on the screen. The gather reads the pixels that the resize keeps from
    what `observe` would return: `observe` crops, rotates and mirrors, which is a transpose,
    so view pixel (row r, column c) of agent i is screen pixel (x_low(i) + c, y_low + r).
    """
    import pygame
    from pettingzoo.utils import BaseParallelWrapper, BaseWrapper
    from pettingzoo.utils.conversions import aec_to_parallel_wrapper

    class SkipObserve(BaseWrapper):
        def observe(self, agent: str) -> None:
            return None

    raw = aec_env.unwrapped
    height, width, _ = aec_env.observation_space(aec_env.possible_agents[0]).shape
    rows = np.linspace(0, height - 1, size).round().astype(np.intp)
    cols = np.linspace(0, width - 1, size).round().astype(np.intp)
    # The crop bounds of pistonball's `observe`: 40 px either side of piston i.
    x_low = raw.wall_width + raw.piston_width * (np.arange(len(raw.possible_agents)) - 1)
    screen_x = x_low[:, None, None] + cols[None, None, :]  # (agents, 1, size)
    screen_y = raw.wall_width + rows[None, :, None]  # (1, size, 1)

    class StackedFrames(BaseParallelWrapper):
        def __init__(self, env: Any):
            super().__init__(env)
            self.space = spaces.Box(0, 255, (stack, size, size), np.uint8)
            self.frames = np.zeros((len(raw.possible_agents), stack, size, size), np.uint8)

        # ParallelEnv declares these on the class, so the wrapper's __getattr__ never sees them.
        @property
        def agents(self) -> list[str]:
            return self.env.agents

        @property
        def possible_agents(self) -> list[str]:
            return self.env.possible_agents

        def observation_space(self, agent: str) -> spaces.Box:
            return self.space

        def _observe(self, agents: Any, fresh: bool) -> dict:
            blue = pygame.surfarray.pixels3d(raw.screen)[:, :, 2]  # (width, height) view
            frame = blue[screen_x, screen_y]  # (agents, size, size)
            del blue  # releases the screen's pixel lock
            if fresh:
                self.frames[:] = frame[:, None]
            else:
                self.frames[:, :-1] = self.frames[:, 1:]
                self.frames[:, -1] = frame
            return {a: self.frames[raw.agent_name_mapping[a]].copy() for a in agents}

        def reset(self, seed: int | None = None, options: dict | None = None) -> tuple:
            observations, infos = self.env.reset(seed=seed, options=options)
            return self._observe(observations, fresh=True), infos

        def step(self, actions: dict) -> tuple:
            observations, *rest = self.env.step(actions)
            return (self._observe(observations, fresh=False), *rest)

    return StackedFrames(aec_to_parallel_wrapper(SkipObserve(aec_env)))


def make_pistonball(
    *,
    n_pistons: int = 20,
    max_cycles: int = 125,
    seed: int | None = 0,
    render_mode: str | None = None,
    buf: Buffer | None = None,
) -> Any:
    """Pistonball with `n_pistons` agents; observations (n_pistons, 3, 84, 84) uint8, actions
    (n_pistons,) int32 in [0, 3). It always renders (see below); `render_mode` is accepted
    for `puffer eval`.

    Example:
        >>> env = make_pistonball(n_pistons=4)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((4, 3, 84, 84), dtype('uint8'), Discrete(3))
    """
    FAMILIES["butterfly"].require("butterfly-pistonball")
    import pettingzoo

    from puffer.core import PettingZooPufferEnv

    env = pettingzoo.make(
        "aec",
        "butterfly/pistonball-v6",
        n_pistons=n_pistons,
        continuous=False,
        max_cycles=max_cycles,
        # Pistonball draws its screen, which the observations are cut from, only when it
        # renders: without a render mode every observation is the first frame forever.
        render_mode="rgb_array",
    )
    wrapped = _pistonball_frames(env, PISTONBALL_SIZE, PISTONBALL_STACK)
    return PettingZooPufferEnv(wrapped, buf=buf, seed=seed)


def make_knights_archers_zombies(
    *,
    num_archers: int = 2,
    num_knights: int = 2,
    max_zombies: int = 10,
    max_cycles: int = 900,
    seed: int | None = 0,
    render_mode: str | None = None,
    buf: Buffer | None = None,
) -> Any:
    """Knights-archers-zombies with vector observations: (agents, 27, 5) float64 rows,
    actions (agents,) int32 in [0, 6).

    Example:
        >>> env = make_knights_archers_zombies()
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, env.single_action_space
        ((4, 27, 5), Discrete(6))
    """
    FAMILIES["butterfly"].require("butterfly-kaz")
    import pettingzoo

    from puffer.core import PettingZooPufferEnv

    env = pettingzoo.make(
        "parallel",
        "butterfly/knights_archers_zombies-v11",
        num_archers=num_archers,
        num_knights=num_knights,
        max_zombies=max_zombies,
        max_cycles=max_cycles,
        obs_method="vector",
        render_mode=render_mode,
    )
    return PettingZooPufferEnv(env, buf=buf, seed=seed)


pistonball = creator(make_pistonball, "butterfly-pistonball", Vectorization.SINGLE)
knights_archers_zombies = creator(
    make_knights_archers_zombies, "butterfly-kaz", Vectorization.SINGLE
)
