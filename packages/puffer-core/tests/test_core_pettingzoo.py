"""PettingZooPufferEnv against the raw parallel env: padding, masks, spawning and dying agents."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import aec_to_parallel

from puffer.core import APIUsageError, PettingZooPufferEnv, emulate_pettingzoo, nativize
from puffer.core.testing import (
    ACTION_CATALOG,
    OBSERVATION_CATALOG,
    action_to_row,
    assert_same_tree,
    float32_exact,
)


class SpawnEnv(ParallelEnv):
    """Agents spawn at random steps and die at random steps; the episode ends when none live.

    With `heterogeneous`, the flyers observe and act in different spaces than the walkers.
    """

    metadata: dict[str, Any] = {"name": "spawn_v0", "render_modes": []}  # noqa: RUF012

    def __init__(self, heterogeneous: bool = False):
        self.possible_agents = ["walker_0", "walker_1", "flyer_0", "flyer_1"]
        walker = (OBSERVATION_CATALOG["box"], ACTION_CATALOG["discrete"])
        flyer = (
            (OBSERVATION_CATALOG["nested"], ACTION_CATALOG["dict-mixed"])
            if heterogeneous
            else walker
        )
        self._spaces = {
            agent: copy.deepcopy(walker if agent.startswith("walker") else flyer)
            for agent in self.possible_agents
        }
        self.agents: list[str] = []
        self.rng = np.random.default_rng()

    def observation_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent][0]

    def action_space(self, agent: str) -> spaces.Space:
        return self._spaces[agent][1]

    def _observe(self, agents: list[str]) -> dict[str, Any]:
        return {agent: self.observation_space(agent).sample() for agent in agents}

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            for agent in self.possible_agents:
                self.observation_space(agent).seed(seed + len(agent))
        self.agents = ["walker_0", "flyer_0"]
        self.unborn = ["walker_1", "flyer_1"]
        self.steps = 0
        return self._observe(self.agents), {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        assert set(actions) == set(self.agents), (actions, self.agents)
        self.steps += 1
        acting = list(self.agents)
        rewards = {agent: float(self.rng.normal()) for agent in acting}
        terminations = {agent: bool(self.rng.random() < 0.08) for agent in acting}
        truncations = {agent: self.steps >= 30 for agent in acting}
        infos = {agent: {"alive": 1} for agent in acting}
        self.agents = [a for a in acting if not (terminations[a] or truncations[a])]
        if self.unborn and self.rng.random() < 0.2 and self.steps < 30:
            self.agents.append(self.unborn.pop(0))  # born now: observed, has not acted yet
        observed = acting + [agent for agent in self.agents if agent not in acting]
        return self._observe(observed), rewards, terminations, truncations, infos


def check_rows(env: PettingZooPufferEnv, raw_obs: dict[str, Any]) -> None:
    for i, agent in enumerate(env.possible_agents):
        if agent in raw_obs:
            assert_same_tree(
                nativize(env.observations[i], env.agent_obs_layouts[agent]), raw_obs[agent]
            )
        else:
            assert not env.observations[i].any(), f"absent {agent} must observe zeros"


def run_equivalence(
    make_raw: Callable[[], Any], steps: int = 1000, seed: int = 3
) -> dict[str, int]:
    """Same seeds and actions for the raw and the emulated env; returns event counts."""
    raw, env = make_raw(), PettingZooPufferEnv(make_raw)
    raw_obs, _ = raw.reset(seed=seed)
    env.reset(seed=seed)
    check_rows(env, raw_obs)
    rng = np.random.default_rng(seed)
    counts = {"episodes": 0, "spawns": 0, "deaths": 0}
    for _ in range(steps):
        actions = {}
        row_actions = np.zeros_like(env.actions)
        for i, agent in enumerate(env.possible_agents):
            if agent in raw.agents:
                space = raw.action_space(agent)
                space.seed(int(rng.integers(1 << 30)))
                actions[agent] = float32_exact(space, space.sample())
                row = action_to_row(env.agent_action_layouts[agent], actions[agent])
                row_actions.reshape(len(row_actions), -1)[i, : row.size] = row.reshape(-1)
        raw_obs, rewards, terms, truncs, _ = raw.step(actions)
        ended = not raw.agents
        if ended:
            counts["episodes"] += 1
            new_obs, _ = raw.reset()
        else:
            counts["spawns"] += sum(agent not in rewards for agent in raw_obs)
            counts["deaths"] += sum(terms[agent] for agent in rewards)
        _, env_rewards, env_terms, env_truncs, infos = env.step(row_actions)
        for i, agent in enumerate(env.possible_agents):
            if agent in rewards:
                assert env_rewards[i] == np.float32(rewards[agent])
                assert env_terms[i] == terms[agent] and env_truncs[i] == truncs[agent]
                assert env.masks[i]
            else:
                assert env_rewards[i] == 0 and not env_terms[i] and not env_truncs[i]
                assert env.masks[i] == (agent in (new_obs if ended else raw_obs))
        assert len(infos) == sum(terms[a] or truncs[a] for a in rewards)
        check_rows(env, new_obs if ended else raw_obs)
    env.close()
    return counts


@pytest.mark.parametrize(
    ("make_raw", "spawns_and_deaths"),
    [
        pytest.param(
            functools.partial(pettingzoo.make, "parallel", "classic/rps-v2"), False, id="rps"
        ),
        pytest.param(
            lambda: aec_to_parallel(pettingzoo.make("aec", "classic/rps-v2")), False, id="rps-aec"
        ),
        pytest.param(SpawnEnv, True, id="spawn"),
        pytest.param(functools.partial(SpawnEnv, heterogeneous=True), True, id="spawn-mixed"),
    ],
)
def test_pettingzoo_equivalence(make_raw: Callable[[], Any], spawns_and_deaths: bool) -> None:
    counts = run_equivalence(make_raw, steps=1000)
    assert counts["episodes"] > 5
    if spawns_and_deaths:
        # Mid-episode: agents spawned while others lived, and died while others went on.
        assert counts["spawns"] > 10 and counts["deaths"] > 10, counts


def test_aec_env_is_converted() -> None:
    env = PettingZooPufferEnv(functools.partial(pettingzoo.make, "aec", "classic/rps-v2"), seed=0)
    assert env.possible_agents == ["player_0", "player_1"]
    env.reset()
    assert env.step(np.array([0, 2], np.int32))[1].tolist() == [1.0, -1.0]


def test_heterogeneous_spaces_are_padded() -> None:
    env = PettingZooPufferEnv(SpawnEnv, env_kwargs={"heterogeneous": True})
    walker, flyer = env.agent_obs_layouts["walker_0"], env.agent_obs_layouts["flyer_0"]
    assert env.obs_layout is None and env.action_layout is None
    assert env.single_observation_space.dtype == np.uint8
    assert env.single_observation_space.shape[0] >= max(walker.dtype.itemsize, flyer.dtype.itemsize)
    assert env.single_observation_space.shape[0] % 8 == 0
    # Walkers' Discrete(5) becomes a float index beside the flyers' mixed action row.
    assert env.single_action_space.dtype == np.float32
    assert env.single_action_space.high[0] == 4
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, env.single_observation_space.shape[0])
    assert env.masks.tolist() == [True, False, True, False]


def test_unparallelizable_aec_env_is_emulated_turn_by_turn() -> None:
    from puffer.core.aec import AECPufferEnv

    env = emulate_pettingzoo(pettingzoo.make("aec", "classic/tictactoe-v3"))
    assert isinstance(env, AECPufferEnv) and env.writes_action_masks
    parallel = emulate_pettingzoo(functools.partial(pettingzoo.make, "parallel", "classic/rps-v2"))
    assert type(parallel) is PettingZooPufferEnv


def test_the_parallel_class_refuses_a_turn_based_env_naming_the_factory() -> None:
    with pytest.raises(
        APIUsageError,
        match=r"tictactoe.* is a turn-based AEC env .* puffer\.core\.emulate_pettingzoo",
    ):
        PettingZooPufferEnv(pettingzoo.make("aec", "classic/tictactoe-v3"))


@pytest.mark.parametrize("module", ["puffer.core.aec", "puffer.core.pettingzoo"])
def test_each_emulation_module_imports_alone(module: str) -> None:
    # No import cycle: each module imports first in a fresh interpreter, and aec.py names
    # nothing of pettingzoo.py.
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    import puffer.core.aec as aec

    assert "puffer.core.pettingzoo" not in Path(aec.__file__).read_text()


def test_homogeneous_structured_spaces_keep_a_shared_layout() -> None:
    class Twins(SpawnEnv):
        def __init__(self) -> None:
            super().__init__()
            nested = OBSERVATION_CATALOG["nested"]
            self._spaces = {a: (copy.deepcopy(nested), spaces.Discrete(2)) for a in self._spaces}

    env = PettingZooPufferEnv(Twins)
    assert env.obs_layout is not None
    assert env.obs_layout.space == OBSERVATION_CATALOG["nested"]
    obs, _ = env.reset(seed=1)
    batch = nativize(obs, env.obs_layout)
    assert batch["zeta"].shape == (4, 3)
