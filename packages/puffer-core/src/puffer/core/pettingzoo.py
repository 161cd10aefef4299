"""PettingZoo emulation: a parallel (or parallelizable AEC) env as a multi-row `PufferEnv`.

Row i belongs to `possible_agents[i]` for the env's whole life. An agent absent from a step
(not spawned yet, or already done) gets a zero observation, reward 0, mask False and no
terminal flag. Agents with different spaces share one padded row (`padded_layouts`); each
agent's own layout is kept in `agent_obs_layouts` / `agent_action_layouts`.
"""

from __future__ import annotations

from typing import Any

from puffer.core.actions import action_checker
from puffer.core.aec import AECPufferEnv, is_turn_based
from puffer.core.agents import describe_agents, instantiate
from puffer.core.buffer import Buffer
from puffer.core.checks import check_mixed_row, check_observation, is_mixed
from puffer.core.emulation import (
    CHECK_STEPS,
    EmulatedEnv,
    action_converter,
    env_name,
    obs_writer,
    row_action_space,
)
from puffer.core.env import Infos
from puffer.core.episodes import EpisodeStats, info_reductions
from puffer.core.errors import APIUsageError, EmulationError
from puffer.core.layout import Layout

__all__ = ["PettingZooPufferEnv", "emulate_pettingzoo"]


def emulate_pettingzoo(
    env: Any = None,
    env_args: tuple = (),
    env_kwargs: dict[str, Any] | None = None,
    buf: Buffer | None = None,
    seed: int | None = None,
    info_reduce: dict[str, str] | None = None,
) -> PettingZooPufferEnv | AECPufferEnv:
    """Any PettingZoo env as a `PufferEnv`: the emulation its API calls for.

    Builds the env once (`env` as in `PettingZooPufferEnv`); a turn-based AEC env (not
    parallelizable, e.g. the classic board games) becomes an `AECPufferEnv`, with one acting
    row per step; a parallel or parallelizable one a `PettingZooPufferEnv`. The other arguments
    go to that class.

    Example:
        >>> import pettingzoo
        >>> type(emulate_pettingzoo(pettingzoo.make("aec", "classic/tictactoe-v3"))).__name__
        'AECPufferEnv'
        >>> type(emulate_pettingzoo(pettingzoo.make("parallel", "classic/rps-v2"))).__name__
        'PettingZooPufferEnv'
    """
    made = instantiate(env, tuple(env_args), env_kwargs, "emulate_pettingzoo")
    emulation = AECPufferEnv if is_turn_based(made) else PettingZooPufferEnv
    return emulation(made, buf=buf, seed=seed, info_reduce=info_reduce)


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


class PettingZooPufferEnv(EmulatedEnv):
    """A PettingZoo env as a `PufferEnv` with one row per possible agent, with auto-reset.

    Args:
        env: a PettingZoo `ParallelEnv` or `AECEnv`, its class, or a creator function (such
            as a module's `parallel_env`). Parallelizable AEC envs are converted with
            `pettingzoo.utils.conversions.aec_to_parallel`; turn-based ones (not
            parallelizable, e.g. the classic board games) are refused: `emulate_pettingzoo`
            builds a `puffer.core.aec.AECPufferEnv` for them.
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
        APIUsageError: bad arguments or actions, step before reset, a turn-based env.

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

    def __init__(
        self,
        env: Any = None,
        env_args: tuple = (),
        env_kwargs: dict[str, Any] | None = None,
        buf: Buffer | None = None,
        seed: int | None = None,
        info_reduce: dict[str, str] | None = None,
    ):
        owner = type(self).__name__
        made = instantiate(env, tuple(env_args), env_kwargs, owner)
        if is_turn_based(made):
            raise APIUsageError(
                f"{owner}: {env_name(made)} is a turn-based AEC env (not parallelizable); emulate it "
                "with puffer.core.emulate_pettingzoo (or puffer.core.aec.AECPufferEnv)"
            )
        self.env = _to_parallel(made, owner)
        self._info_reduce = info_reductions(self.env, info_reduce, type(self).__name__)
        obs_layouts, act_layouts = describe_agents(self)
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
