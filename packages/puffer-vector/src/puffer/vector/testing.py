"""Small native PufferEnvs for testing and benchmarking vectorizers.

`DeterministicEnv` covers single-agent, multi-agent (masks that change) and raw-bytes
observations with discrete, multi-discrete or float actions; its trajectory depends on the seed
and on every action, so a vectorizer that routes a row wrongly is caught. `HeavyEnv` burns a
fixed amount of numpy work per step (about 100 µs by default here). `FaultyEnv` raises at a
given step and `SleepyEnv` sleeps in every step.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import batch_space

from puffer.core import Buffer, PufferEnv

__all__ = [
    "DeterministicEnv",
    "FaultyEnv",
    "HeavyEnv",
    "SleepyEnv",
    "check_against_single_envs",
    "check_final_observations",
    "sb3_cartpole_ppo_kwargs",
]

Infos = list[dict[str, float]]


class DeterministicEnv(PufferEnv):
    """A seeded random walk per agent with episodes of random length, auto-reset.

    Args:
        num_agents: rows. With more than one, masks turn off about one agent step in five.
        action: "discrete" (Discrete(5)), "multidiscrete" ([3, 4]) or "box" (float32, (2,)).
        obs: "float" ((4,) float32) or "bytes" ((2, 8) uint8: the same floats as raw bytes).
        max_steps: longest episode; an episode of even length ends terminal, odd truncated.
        buf: rows to write into.
    """

    def __init__(
        self,
        num_agents: int = 1,
        action: str = "discrete",
        obs: str = "float",
        max_steps: int = 20,
        buf: Buffer | None = None,
    ):
        self.num_agents = num_agents
        self.single_action_space = {
            "discrete": spaces.Discrete(5),
            "multidiscrete": spaces.MultiDiscrete([3, 4]),
            "box": spaces.Box(-1.0, 1.0, (2,), np.float32),
        }[action]
        self.single_observation_space = {
            "float": spaces.Box(-np.inf, np.inf, (4,), np.float32),
            "bytes": spaces.Box(0, 255, (2, 8), np.uint8),
        }[obs]
        self.max_steps = max_steps
        super().__init__(buf)

    def _reset(self, seed: int | None) -> Infos:
        n = self.num_agents
        self._rng = np.random.default_rng(seed)
        self._state = self._rng.normal(size=n).astype(np.float32)
        self._t = np.zeros(n, np.int64)
        self._length = self._rng.integers(2, self.max_steps, size=n)
        self._return = np.zeros(n, np.float32)
        self._last = np.zeros(n, np.float32)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        self.masks[:] = True
        self._write_obs()
        return []

    def _step(self) -> Infos:
        n = self.num_agents
        self._last = self.actions.reshape(n, -1).astype(np.float32).sum(axis=1)
        noise = self._rng.normal(size=n).astype(np.float32)
        self._state = np.float32(0.9) * self._state + self._last + np.float32(0.1) * noise
        self._t += 1
        self.rewards[:] = np.tanh(self._state)
        self._return += self.rewards
        if n > 1:
            self.masks[:] = self._rng.random(n) > 0.2
        done = self._t >= self._length
        self.terminals[:] = done & (self._length % 2 == 0)
        self.truncations[:] = done & (self._length % 2 == 1)
        infos = [
            {"episode_return": float(self._return[i]), "episode_length": float(self._t[i])}
            for i in np.flatnonzero(done)
        ]
        if done.any():
            self._state[done] = self._rng.normal(size=int(done.sum()))
            self._t[done] = 0
            self._length[done] = self._rng.integers(2, self.max_steps, size=int(done.sum()))
            self._return[done] = 0
        self._write_obs()
        return infos

    def _write_obs(self) -> None:
        values = np.stack(
            [self._state, self._t, self._length, self._last], axis=1, dtype=np.float32
        )
        if self.observations.dtype == np.uint8:
            values = values.view(np.uint8)
        self.observations[...] = values.reshape(self.observations.shape)


class HeavyEnv(PufferEnv):
    """One agent whose step burns `work` passes of `np.sin` over 1024 floats (≈100 µs here).

    Observations (4,) float32, actions Discrete(2), reward 1, truncated every 200 steps.
    The work is elementwise on purpose: no BLAS threads, so one env uses one core.
    """

    def __init__(self, work: int = 6, buf: Buffer | None = None):
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (4,), np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.work = work
        self._input = np.linspace(0.0, 1.0, 1024)
        self._scratch = np.empty_like(self._input)
        super().__init__(buf)

    def _reset(self, seed: int | None) -> Infos:
        self._rng = np.random.default_rng(seed)
        self._t = 0
        self.observations[:] = self._rng.normal(size=self.observations.shape)
        self.rewards[:] = 0
        self.terminals[:] = False
        self.truncations[:] = False
        return []

    def _step(self) -> Infos:
        for _ in range(self.work):
            np.sin(self._input, out=self._scratch)
        self._t += 1
        self.observations[:, 0] += self.actions - 0.5
        self.observations[:, 1] = self._scratch[0]
        self.rewards[:] = 1.0
        self.truncations[:] = self._t % 200 == 0
        return [{"episode_length": 200.0}] if self._t % 200 == 0 else []


class FaultyEnv(DeterministicEnv):
    """A `DeterministicEnv` whose step number `fail_at` raises `ValueError` (in env `which`)."""

    def __init__(self, fail_at: int = 3, buf: Buffer | None = None):
        self.fail_at = fail_at
        self._steps = 0
        super().__init__(buf=buf)

    def _step(self) -> Infos:
        self._steps += 1
        if self._steps == self.fail_at:
            raise ValueError(f"FaultyEnv failed on purpose at step {self._steps}")
        return super()._step()


class SleepyEnv(DeterministicEnv):
    """A `DeterministicEnv` that sleeps `seconds` in every step (a slow env costs no CPU)."""

    def __init__(self, seconds: float = 0.01, buf: Buffer | None = None):
        self.seconds = seconds
        super().__init__(buf=buf)

    def _step(self) -> Infos:
        time.sleep(self.seconds)
        return super()._step()


def check_against_single_envs(vec: Any, steps: int = 1000, seed: int = 0) -> None:
    """Assert that `vec` matches its envs stepped one by one, each alone, with auto-reset.

    Every env gets its own seeded action sequence. The vectorizer is driven through
    `async_reset`/`recv`/`send` until every env has taken `steps` steps (faster envs of an async
    pool may take more); each env's observations, rewards, terminals, truncations and masks
    must equal those of a lone copy built with `buf=None` and reset with `seed + i` (and its
    legal-action masks, `vec.action_masks`, when the env has them). When
    `instances_per_recv == num_instances` the infos must match too, step by step.

    Raises:
        AssertionError: naming the env, the step and the array that differ.
    """
    per = vec.agents_per_env
    dtype = vec.buf.actions.dtype
    single = batch_space(vec.single_action_space, per)
    tables = []
    for i in range(vec.num_instances):
        single.seed(seed + 1000 + i)
        tables.append(np.stack([single.sample() for _ in range(steps)]).astype(dtype))

    masked = vec.action_masks is not None if hasattr(vec, "action_masks") else False
    extra = ("action_masks",) if masked else ()

    def lone_masks(env: Any) -> tuple:
        return (env.action_masks,) if masked else ()

    expected, expected_infos, expected_reset = [], [], []
    for i in range(vec.num_instances):
        env = vec.env_creator(*vec.env_args, buf=None, **vec.env_kwargs)
        env.reset(seed + i)
        expected_reset.append(_snapshot(env.observations, env.masks, *lone_masks(env)))
        rows, infos = [], []
        for t in range(steps):
            out = env.step(tables[i][t])
            rows.append(_snapshot(env.observations, *out[1:4], env.masks, *lone_masks(env)))
            infos.append(out[4])
        env.close()
        expected.append(rows)
        expected_infos.append(infos)

    counts = np.zeros(vec.num_instances, np.int64)
    started = np.zeros(vec.num_instances, bool)
    vec.async_reset(seed)
    while counts.min() < steps:
        obs, rewards, terminals, truncations, infos, agent_ids, masks = vec.recv()
        action_masks = vec.action_masks
        envs = agent_ids[::per] // per
        for k, e in enumerate(envs):
            rows = slice(k * per, (k + 1) * per)
            got_masks = (action_masks[rows],) if masked else ()
            if not started[e]:
                got = _snapshot(obs[rows], masks[rows], *got_masks)
                names, want, started[e] = ("observations", "masks", *extra), expected_reset[e], True
                t = "reset"
            elif counts[e] < steps:
                got = _snapshot(
                    obs[rows],
                    rewards[rows],
                    terminals[rows],
                    truncations[rows],
                    masks[rows],
                    *got_masks,
                )
                names, want, t = (*_NAMES, *extra), expected[e][counts[e]], counts[e]
                counts[e] += 1
            else:
                continue
            for name, a, b in zip(names, want, got, strict=True):
                assert np.array_equal(a, b), f"{vec!r}: env {e} step {t}: {name} {b} != {a}"
        if vec.instances_per_recv == vec.num_instances and counts[0] > 0:
            step = counts[0] - 1
            want = [info for e in range(vec.num_instances) for info in expected_infos[e][step]]
            assert infos == want, f"{vec!r}: step {step}: infos {infos} != {want}"
        actions = np.concatenate([tables[e][min(counts[e], steps - 1)] for e in envs])
        vec.send(actions)


def check_final_observations(
    vec: Any, make_raw: Callable[[], Any], steps: int = 300, seed: int = 3
) -> None:
    """Assert that `vec` (one agent per env, Discrete actions, any batch size) matches raw
    Gymnasium envs.

    One raw env per puffer env (`make_raw()`, the same env unwrapped from puffer), reset with
    `seed + i` and stepped with the actions sent for its row, resetting by hand when an episode
    ends. Every `recv()` batch is compared row by row: observations, flags and, on rows whose
    episode ended, `vec.final_observations` against the raw env's last observation.

    Raises:
        AssertionError: a row differs, or fewer than `num_instances` episodes ended.
    """
    raws = [make_raw() for _ in range(vec.num_instances)]
    expected = {i: (raw.reset(seed=seed + i)[0], False, False) for i, raw in enumerate(raws)}
    rng = np.random.default_rng(seed)
    vec.async_reset(seed)
    ended = 0
    for t in range(steps):
        obs, _, terminals, truncations, _, agent_ids, _ = vec.recv()
        final = vec.final_observations
        assert final is not None and final.shape == obs.shape, f"{vec!r}: final {final}"
        for row, env in enumerate(agent_ids.tolist()):
            raw_obs, terminated, truncated = expected.pop(env)
            flags = (bool(terminals[row]), bool(truncations[row]))
            assert flags == (terminated, truncated), f"{vec!r}: env {env} step {t}: {flags}"
            if terminated or truncated:
                ended += 1
                assert np.array_equal(final[row], raw_obs), (
                    f"{vec!r}: env {env} step {t}: final observation {final[row]} != {raw_obs}"
                )
                raw_obs, _ = raws[env].reset()
            assert np.array_equal(obs[row], raw_obs), f"{vec!r}: env {env} step {t}: obs"
        actions = rng.integers(0, vec.single_action_space.n, len(agent_ids)).astype(np.int32)
        for env, action in zip(agent_ids.tolist(), actions, strict=True):
            raw_obs, _, terminated, truncated, _ = raws[env].step(action.item())
            expected[env] = (raw_obs, terminated, truncated)
        vec.send(actions)
    vec.recv()
    for raw in raws:
        raw.close()
    assert ended >= vec.num_instances, f"{vec!r}: only {ended} episodes ended in {steps} steps"


def sb3_cartpole_ppo_kwargs() -> dict[str, Any]:
    """Keyword arguments of SB3's `PPO` for CartPole-v1 from the rl-baselines3-zoo (8 envs,
    100k steps there), used by the SB3 test and `benchmarks/sb3.py`."""
    return {
        "n_steps": 32,
        "batch_size": 256,
        "gae_lambda": 0.8,
        "gamma": 0.98,
        "n_epochs": 20,
        "ent_coef": 0.0,
        "learning_rate": lambda progress: 1e-3 * progress,  # linear decay to 0
        "clip_range": lambda progress: 0.2 * progress,
    }


_NAMES = ("observations", "rewards", "terminals", "truncations", "masks")


def _snapshot(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.array(a, copy=True) for a in arrays)
