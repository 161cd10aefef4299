"""Turn-based PettingZoo emulation: an AEC env that is not parallelizable as a `PufferEnv`.

One puffer step is one AEC step: row i belongs to `possible_agents[i]`; only the row of the
agent whose turn it is (`agent_selection`) has mask True, and only its action is applied (the
other rows' actions are ignored). Every step reports every agent's reward for that step
(`env.rewards`, PettingZoo's instantaneous reward), so an agent sees the reward of the
opponent's winning move on the step it happens. An agent whose episode ends reports its
terminal / truncation flag once; when every agent is done the env auto-resets, and the rows
hold the first observations of the next game.

Legal-action masks: when every agent's observation is a Dict with an `action_mask` key (the
PettingZoo classic convention), the env `writes_action_masks` and copies each agent's mask
into its row of `action_masks` (rows of agents not to act hold what their observation says,
usually all False). The mask stays in the observation too, so the policy can read it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core.actions import action_checker
from puffer.core.agents import describe_agents, instantiate
from puffer.core.buffer import Buffer, mask_width
from puffer.core.checks import check_observation
from puffer.core.emulation import (
    ACTION_MASK_KEY,
    CHECK_STEPS,
    EmulatedEnv,
    action_converter,
    obs_writer,
    row_action_space,
)
from puffer.core.env import Infos
from puffer.core.episodes import EpisodeStats, info_reductions
from puffer.core.errors import EmulationError

__all__ = ["AECPufferEnv", "is_turn_based"]


def is_turn_based(env: Any) -> bool:
    """True for a PettingZoo `AECEnv` whose metadata says it is not parallelizable."""
    from pettingzoo import AECEnv  # optional dependency (extra `pettingzoo`)

    return isinstance(env, AECEnv) and not env.metadata.get("is_parallelizable", False)


def _mask_source(obs_spaces: list[spaces.Space], act_spaces: list[spaces.Space]) -> bool:
    """True when every agent observes a Dict with an `action_mask` of its action size."""
    for obs, act in zip(obs_spaces, act_spaces, strict=True):
        if not (isinstance(obs, spaces.Dict) and ACTION_MASK_KEY in obs.spaces):
            return False
        if not isinstance(act, spaces.Discrete | spaces.MultiDiscrete):
            return False
        if int(np.prod(obs[ACTION_MASK_KEY].shape)) != mask_width(act):
            return False
    different = any(act != act_spaces[0] for act in act_spaces)
    if different and not all(isinstance(act, spaces.Discrete) for act in act_spaces):
        raise EmulationError(
            "agents have different MultiDiscrete action spaces and action masks; masks are "
            "emulated for one shared action space, or for Discrete spaces of any sizes"
        )
    return True


class AECPufferEnv(EmulatedEnv):
    """A turn-based PettingZoo `AECEnv` as a `PufferEnv` with one row per possible agent.

    Args:
        env: an `AECEnv`, its class, or a creator function (such as a module's `env`).
        env_args: positional arguments for the class / creator.
        env_kwargs: keyword arguments for the class / creator.
        buf: a `Buffer` of `len(possible_agents)` rows to write into (allocated when None).
        seed: seed for the first `reset()` called without one.
        info_reduce: how an info key becomes the episode's value, per key ("mean", "last",
            "sum"; see `puffer.core.episodes`).

    Attributes are those of `PettingZooPufferEnv` (`possible_agents`, layouts per agent), plus
    `action_masks` when the observations carry an `action_mask` (see the module docstring).
    `puffer.core.emulate_pettingzoo` builds this class for AEC envs that are not parallelizable.

    Raises:
        EmulationError: a space cannot be emulated, or an observation is outside its
            agent's space during the first `CHECK_STEPS` steps.
        APIUsageError: bad arguments or actions, step before reset.

    Example:
        >>> import pettingzoo
        >>> env = AECPufferEnv(pettingzoo.make("aec", "classic/tictactoe-v3"), seed=0)
        >>> obs, _ = env.reset()
        >>> env.masks, env.action_masks.shape
        (array([ True, False]), (2, 9))
        >>> _ = env.step(np.array([4, 0], np.int32))  # player_1 takes the centre
        >>> env.masks, int(env.action_masks[1].sum())
        (array([False,  True]), 8)
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
        self.env = instantiate(env, tuple(env_args), env_kwargs, type(self).__name__)
        self._info_reduce = info_reductions(self.env, info_reduce, type(self).__name__)
        obs_layouts, act_layouts = describe_agents(self)
        self._index = {agent: i for i, agent in enumerate(self.possible_agents)}
        try:
            self.writes_action_masks = _mask_source(self._obs_spaces, self._act_spaces)
        except EmulationError as error:
            raise EmulationError(f"{self!r}: {error}") from None
        super().__init__(buf)
        self._seed = seed
        self._checks_left = CHECK_STEPS
        self._writers = [
            obs_writer(self.observations[i, ...], layout) for i, layout in enumerate(obs_layouts)
        ]
        final = self.final_observations
        self._final_writers = [obs_writer(final[i, ...], lay) for i, lay in enumerate(obs_layouts)]
        owners = [f"{self!r} agent {agent!r}" for agent in self.possible_agents]
        self._converters = [
            action_converter(layout, self.actions[i, ...], owner)
            for i, (layout, owner) in enumerate(zip(act_layouts, owners, strict=True))
        ]
        different = any(space != self._act_spaces[0] for space in self._act_spaces)
        # `PufferEnv.step` checks rows against the padded space; agents with smaller spaces
        # also get their own check (only the acting row is ever checked against it).
        self._own_checks = [
            action_checker(row_action_space(layout), owner, num_rows=1) if different else None
            for layout, owner in zip(act_layouts, owners, strict=True)
        ]
        self._stats = [EpisodeStats(self._info_reduce) for _ in self.possible_agents]
        self._done: set[str] = set()

    # Writing rows ---------------------------------------------------------------------------

    def _observe_all(self, where: str) -> None:
        """Observation (and legal-action mask) of every live agent; zeros for the others."""
        live = set(self.env.agents)
        for i, agent in enumerate(self.possible_agents):
            if agent not in live or agent in self._done:
                self.observations[i] = 0
                if self.action_masks is not None:
                    self.action_masks[i] = False
                continue
            obs = self.env.observe(agent)
            if self._checks_left:
                check_observation(f"{self!r} agent {agent!r}", self._obs_spaces[i], obs, where)
            self._writers[i](obs)
            if self.action_masks is not None:
                mask = np.asarray(obs[ACTION_MASK_KEY]).reshape(-1)
                self.action_masks[i, : mask.size] = mask
                self.action_masks[i, mask.size :] = False
        self.masks[:] = False
        selected = self.env.agent_selection
        if selected in live and selected not in self._done:
            self.masks[self._index[selected]] = True

    def _reset(self, seed: int | None) -> Infos:
        if seed is None:
            seed, self._seed = self._seed, None
        self.env.reset(seed=seed)
        self._done = set()
        self._stats = [EpisodeStats(self._info_reduce) for _ in self.possible_agents]
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self._observe_all("reset()")
        return []

    def _step(self) -> Infos:
        if self._checks_left:
            self._checks_left -= 1
        env = self.env
        i = self._index[env.agent_selection]
        own = self._own_checks[i]
        if own is not None:
            width = self.actions.shape[1] if self.actions.ndim > 1 else None
            own(self.actions[i : i + 1, :width] if width else self.actions[i : i + 1])
        env.step(self._converters[i]())
        self._stats[i].length += 1
        finished = self._report()
        # Agents that are done must be stepped with None before the game goes on (the AEC
        # contract); their rewards were reported above, and stepping them clears rewards.
        while env.agents and (
            env.terminations.get(env.agent_selection) or env.truncations.get(env.agent_selection)
        ):
            if all(agent in self._done for agent in env.agents):
                break  # every agent is done: reset instead of stepping each one out
            env.step(None)
        if not env.agents or all(agent in self._done for agent in env.agents):
            env.reset()
            self._done = set()
            self._observe_all("reset()")
        else:
            self._observe_all("step()")
        return finished

    def _report(self) -> Infos:
        """Rewards and flags of this AEC step for every agent; stats of finished episodes."""
        env, finished = self.env, []
        rewards, terminations, truncations = env.rewards, env.terminations, env.truncations
        for i, agent in enumerate(self.possible_agents):
            if agent in self._done or agent not in rewards:
                self.rewards[i] = 0.0
                self.terminals[i] = False
                self.truncations[i] = False
                continue
            reward = float(rewards[agent])
            terminated = bool(terminations.get(agent, False))
            truncated = bool(truncations.get(agent, False))
            self.rewards[i] = reward
            self.terminals[i] = terminated
            self.truncations[i] = truncated
            stats = self._stats[i]
            stats.total += reward
            info = env.infos.get(agent)
            if info:
                stats.add_info({k: v for k, v in info.items() if k != ACTION_MASK_KEY})
            if terminated or truncated:
                self._done.add(agent)
                finished.append(stats.finish())
                obs = env.observe(agent)
                if self._checks_left:
                    owner = f"{self!r} agent {agent!r}"
                    check_observation(owner, self._obs_spaces[i], obs, "step()")
                self._final_writers[i](obs)
        return finished
