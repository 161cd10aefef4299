"""PettingZoo emulation: a parallel (or parallelizable AEC) env as a multi-row `PufferEnv`.

Row i belongs to `possible_agents[i]` for the env's whole life. An agent absent from a step
(not spawned yet, or already done) gets a zero observation, reward 0, mask False and no
terminal flag. Agents with different spaces share one padded row (`padded_layouts`); each
agent's own layout is kept in `agent_obs_layouts` / `agent_action_layouts`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.actions import action_checker
from puffer.core.aec import AECPufferEnv, is_turn_based
from puffer.core.buffer import Buffer
from puffer.core.checks import check_mixed_row, check_observation, is_mixed
from puffer.core.emulation import (
    CHECK_STEPS,
    EmulatedEnv,
    action_converter,
    env_name,
    obs_writer,
    row_action_space,
    row_space,
)
from puffer.core.env import Infos
from puffer.core.episodes import EpisodeStats, info_reductions
from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import (
    Layout,
    action_layout,
    observation_layout,
    padded_layouts,
)

__all__ = ["PettingZooPufferEnv"]


def _instantiate(env: Any, env_args: tuple, env_kwargs: dict | None, owner: str) -> Any:
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


def _to_parallel(env: Any, owner: str) -> Any:
    """A parallel env: as given, or a parallelizable AEC env through PettingZoo's converter."""
    from pettingzoo import AECEnv
    from pettingzoo.utils.conversions import aec_to_parallel

    if isinstance(env, AECEnv):
        env = aec_to_parallel(env)
    if not hasattr(env, "possible_agents"):
        raise EmulationError(
            f"{owner}: {env!r} is not a PettingZoo env (no possible_agents); pass a "
            "ParallelEnv or AECEnv, its class, or a function returning one"
        )
    return env


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


def _describe_agents(self: EmulatedEnv) -> tuple[list[Layout], list[Layout]]:
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


class PettingZooPufferEnv(EmulatedEnv):
    """A PettingZoo env as a `PufferEnv` with one row per possible agent, with auto-reset.

    Args:
        env: a PettingZoo `ParallelEnv` or `AECEnv`, its class, or a creator function (such
            as a module's `parallel_env`). Parallelizable AEC envs are converted with
            `pettingzoo.utils.conversions.aec_to_parallel`; turn-based ones (not
            parallelizable, e.g. the classic board games) give a
            `puffer.core.aec.AECPufferEnv` instead, with one acting row per step.
        env_args: positional arguments for the class / creator.
        env_kwargs: keyword arguments for the class / creator.
        buf: a `Buffer` of `len(possible_agents)` rows to write into (allocated when None).
        seed: seed for the first `reset()` called without one.
        info_reduce: how an info key becomes the episode's value, per key ("mean", "last",
            "sum"; see `puffer.core.episodes`).

    Attributes:
        env: the wrapped parallel env.
        possible_agents: agent ids, in row order.
        obs_layout / action_layout: the shared `Layout` when every agent has the same
            structured space, else None (lone leaves, or agents with different spaces).
        agent_obs_layouts / agent_action_layouts: each agent's own `Layout`; with different
            spaces `nativize(env.observations[i], env.agent_obs_layouts[agent])` reads row i.

    Rows are padded to `len(possible_agents)`: absent agents get zero observations, reward 0,
    mask False and are not reported terminal. An agent that finishes reports its final reward
    and flag with mask True. Auto-reset happens once every agent is done; the rows then hold
    the first observations of the next episode. `final_observations` gets the last
    observation of each agent whose episode ended on that step (when the env reports one).
    Infos hold one `{episode_return, episode_length, <numeric infos>}` dict per agent whose
    episode ended (return and length summed, each info key reduced per `info_reduce`).

    Raises:
        EmulationError: a space cannot be emulated, or an observation is outside its agent's space during the first `CHECK_STEPS` steps.
        APIUsageError: bad arguments or actions, step before reset.

    Example:
        >>> import pettingzoo
        >>> env = PettingZooPufferEnv(pettingzoo.make("parallel", "classic/rps-v2"), seed=0)
        >>> obs, infos = env.reset()
        >>> obs.shape, obs.dtype, env.single_action_space
        ((2, 1), dtype('int64'), Discrete(3))
        >>> _, rewards, terminals, truncations, infos = env.step(np.array([0, 1], np.int32))
        >>> rewards
        array([-1.,  1.], dtype=float32)
    """

    writes_final_observations = True

    def __new__(
        cls,
        env: Any = None,
        env_args: tuple = (),
        env_kwargs: dict[str, Any] | None = None,
        buf: Buffer | None = None,
        seed: int | None = None,
        info_reduce: dict[str, str] | None = None,
    ):
        # The env is built here, once: whether it is turn-based decides the class. The built
        # env travels to __init__ in `_made` (Python calls __init__ with the original args).
        made = _instantiate(env, tuple(env_args), env_kwargs, cls.__name__)
        if is_turn_based(made):
            return AECPufferEnv(made, buf=buf, seed=seed, info_reduce=info_reduce)
        self = super().__new__(cls)
        self._made = made
        return self

    def __init__(
        self,
        env: Any = None,
        env_args: tuple = (),
        env_kwargs: dict[str, Any] | None = None,
        buf: Buffer | None = None,
        seed: int | None = None,
        info_reduce: dict[str, str] | None = None,
    ):
        self.env = _to_parallel(self.__dict__.pop("_made"), type(self).__name__)
        self._info_reduce = info_reductions(self.env, info_reduce, type(self).__name__)
        obs_layouts, act_layouts = _describe_agents(self)
        super().__init__(buf)
        self._seed = seed
        self._checks_left = CHECK_STEPS
        self._writers = [
            obs_writer(self.observations[i, ...], layout) for i, layout in enumerate(obs_layouts)
        ]
        final = self.final_observations
        self._final_writers = (
            None
            if final is None
            else [obs_writer(final[i, ...], layout) for i, layout in enumerate(obs_layouts)]
        )
        self._converters = [
            action_converter(layout, self.actions[i, ...], f"{self!r} agent {agent!r}")
            for i, (layout, agent) in enumerate(zip(act_layouts, self.possible_agents, strict=True))
        ]
        self._act_layouts = act_layouts
        self._agent_checks = self._own_action_checks(act_layouts)
        self._stats = [EpisodeStats(self._info_reduce) for _ in self.possible_agents]

    def _own_action_checks(self, layouts: list[Layout]) -> list:
        """Per-agent `(check, columns, layout)` where the padded row check is not enough.

        `PufferEnv.step` checks every row against the shared (padded) action space. Agents
        with different spaces get a second check of their own row prefix against their own
        space (a sampled action can be valid for one agent and not another), and mixed
        discrete + continuous rows a check that their discrete parts are whole numbers.
        """
        different = any(space != self._act_spaces[0] for space in self._act_spaces)
        checks = []
        for agent, layout in zip(self.possible_agents, layouts, strict=True):
            owner = f"{self!r} agent {agent!r}"
            own = action_checker(row_action_space(layout), owner, num_rows=1) if different else None
            width = layout.row_shape[0] if layout.row_shape else None
            mixed = is_mixed(layout)
            checks.append((own, width, layout if mixed else None, owner))
        return checks if different or any(check[2] for check in checks) else []

    def _write_observations(self, observations: dict[str, Any], where: str) -> None:
        for i, agent in enumerate(self.possible_agents):
            if agent in observations:
                obs = observations[agent]
                if self._checks_left:
                    check_observation(f"{self!r} agent {agent!r}", self._obs_spaces[i], obs, where)
                self._writers[i](obs)
            else:
                self.observations[i] = 0

    def _reset(self, seed: int | None) -> Infos:
        if seed is None:
            seed, self._seed = self._seed, None
        observations, _ = self.env.reset(seed=seed)
        self._write_observations(observations, "reset()")
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = [agent in observations for agent in self.possible_agents]
        self._stats = [EpisodeStats(self._info_reduce) for _ in self.possible_agents]
        return []

    def _step(self) -> Infos:
        live = set(self.env.agents)
        if self._checks_left:
            self._checks_left -= 1
        actions = {}
        for i, agent in enumerate(self.possible_agents):
            if agent in live:
                if self._agent_checks:
                    own, width, mixed, owner = self._agent_checks[i]
                    if own is not None:
                        own(self.actions[i : i + 1, :width] if width else self.actions[i : i + 1])
                    if mixed is not None:
                        check_mixed_row(owner, mixed, self.actions[i, ...])
                actions[agent] = self._converters[i]()
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        finished = []
        for i, agent in enumerate(self.possible_agents):
            reported = agent in rewards
            self.masks[i] = reported or agent in observations
            if not reported:
                self.rewards[i] = 0.0
                self.terminals[i] = False
                self.truncations[i] = False
                continue
            reward = rewards[agent]
            terminated = bool(terminations.get(agent, False))
            truncated = bool(truncations.get(agent, False))
            self.rewards[i] = reward
            self.terminals[i] = terminated
            self.truncations[i] = truncated
            stats = self._stats[i]
            stats.total += reward
            stats.length += 1
            info = infos.get(agent)
            if info:
                stats.add_info(info)
            if terminated or truncated:
                finished.append(stats.finish())
                if self._final_writers is not None and agent in observations:
                    obs = observations[agent]
                    if self._checks_left:
                        owner = f"{self!r} agent {agent!r}"
                        check_observation(owner, self._obs_spaces[i], obs, "step()")
                    self._final_writers[i](obs)
        if not self.env.agents:
            observations, _ = self.env.reset()
            for i, agent in enumerate(self.possible_agents):
                self.masks[i] |= agent in observations
            self._write_observations(observations, "reset()")
        else:
            self._write_observations(observations, "step()")
        return finished
