"""What the PettingZoo emulations (parallel and turn-based AEC) know of their agents.

Shared by `puffer.core.pettingzoo` and `puffer.core.aec`, which import it and not each other's
internals: building the PettingZoo env from what the caller passed, and each agent's spaces and
layouts, padded into one row space where agents differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.emulation import EmulatedEnv, env_name, row_action_space, row_space
from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import Layout, action_layout, observation_layout, padded_layouts

__all__ = ["describe_agents", "instantiate"]


def instantiate(env: Any, env_args: tuple, env_kwargs: dict | None, owner: str) -> Any:
    """The PettingZoo env itself: `env` if it is one, else `env(*env_args, **env_kwargs)`."""
    from pettingzoo import AECEnv, ParallelEnv  # optional dependency (extra `pettingzoo`)

    if env is None:
        raise APIUsageError(f"{owner}: no env given; pass a PettingZoo env, class or creator")
    if isinstance(env, AECEnv | ParallelEnv):
        if env_args or env_kwargs:
            raise APIUsageError(
                f"{owner}: env_args/env_kwargs given with an env instance {env!r}; pass the "
                "class or a creator function instead to have them applied"
            )
        return env
    return env(*env_args, **(env_kwargs or {}))


def _padded_observation_space(layouts: list[Layout], width: int) -> spaces.Box:
    dtype = layouts[0].row_dtype
    if dtype == np.uint8 and any(leaf.dtype != dtype for lay in layouts for leaf in lay.leaves):
        return spaces.Box(0, 255, (width,), dtype)
    low, high = np.zeros(width, dtype), np.zeros(width, dtype)
    for layout in layouts:
        box = row_space(layout)
        n = box.shape[0]
        low[:n], high[:n] = np.minimum(low[:n], box.low), np.maximum(high[:n], box.high)
    return spaces.Box(low, high, (width,), dtype)


def _padded_action_space(layouts: list[Layout], width: int) -> spaces.Space:
    own = [row_action_space(layout) for layout in layouts]
    if not width:  # every agent has a lone Discrete action
        return spaces.Discrete(max(int(space.n) for space in own))
    if all(isinstance(space, spaces.MultiDiscrete) for space in own):
        # Padding entries have one choice (0), so any sample is valid for every agent there.
        nvec = np.ones(width, np.int64)
        for space in own:
            nvec[: len(space.nvec)] = np.maximum(nvec[: len(space.nvec)], space.nvec)
        return spaces.MultiDiscrete(nvec)
    low, high = np.zeros(width, np.float32), np.zeros(width, np.float32)
    for space in own:
        n = space.shape[0]
        low[:n], high[:n] = np.minimum(low[:n], space.low), np.maximum(high[:n], space.high)
    return spaces.Box(low, high, (width,), np.float32)


def _agent_layouts(
    space_list: list[spaces.Space], action: bool
) -> tuple[list[Layout], spaces.Space, Layout | None]:
    """Per-agent layouts, the row space, and the shared layout (None for lone leaves or mixes)."""
    if all(space == space_list[0] for space in space_list):
        layout = (action_layout if action else observation_layout)(space_list[0])
        row = (row_action_space if action else row_space)(layout)
        return [layout] * len(space_list), row, None if layout.single_leaf else layout
    layouts, width = padded_layouts(space_list, action)
    row = (_padded_action_space if action else _padded_observation_space)(layouts, width)
    return layouts, row, None


def describe_agents(self: EmulatedEnv) -> tuple[list[Layout], list[Layout]]:
    """Set what a PettingZoo emulation knows of its agents before `PufferEnv.__init__`.

    Sets `name`, `possible_agents`, their spaces, the row spaces and layouts, the per-agent
    layouts, `num_agents` and `render_mode` on `self` (whose `env` is set); returns each
    agent's observation and action layouts, in row order.
    """
    self.name = env_name(self.env)
    self.possible_agents = list(self.env.possible_agents)
    self._obs_spaces = [self.env.observation_space(agent) for agent in self.possible_agents]
    self._act_spaces = [self.env.action_space(agent) for agent in self.possible_agents]
    try:
        obs_layouts, self.single_observation_space, self.obs_layout = _agent_layouts(
            self._obs_spaces, action=False
        )
        act_layouts, self.single_action_space, self.action_layout = _agent_layouts(
            self._act_spaces, action=True
        )
    except EmulationError as error:
        raise EmulationError(f"{self!r}: {error}") from None
    self.agent_obs_layouts = dict(zip(self.possible_agents, obs_layouts, strict=True))
    self.agent_action_layouts = dict(zip(self.possible_agents, act_layouts, strict=True))
    self.num_agents = len(self.possible_agents)
    self.render_mode = getattr(self.env, "render_mode", None)
    return obs_layouts, act_layouts
