"""`final_observations`: the last observation of each ended episode, step for step against raw
Gymnasium envs, through every backend and the Gymnasium VectorEnv adapter."""

from __future__ import annotations

from collections.abc import Iterator

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from puffer.core import APIUsageError, GymnasiumPufferEnv
from puffer.vector import make
from puffer.vector.gym import VectorEnv
from puffer.vector.gym import make as make_gym
from puffer.vector.testing import DeterministicEnv, check_final_observations

# Short episodes: CartPole both terminates (pole falls) and truncates (time limit) here.
KWARGS = {"max_episode_steps": 12}
STEPS = 300


def raw_env() -> gymnasium.Env:
    return gymnasium.make("CartPole-v1", **KWARGS)


def test_emulated_env_final_observations_match_the_raw_env() -> None:
    env = GymnasiumPufferEnv("CartPole-v1", env_kwargs=KWARGS)
    raw = raw_env()
    assert env.writes_final_observations and env.final_observations.shape == (1, 4)
    obs, _ = env.reset(seed=5)
    raw_obs, _ = raw.reset(seed=5)
    rng = np.random.default_rng(0)
    ended = {"terminal": 0, "truncation": 0}
    for _ in range(STEPS):
        action = int(rng.integers(2))
        env.final_observations[:] = np.nan  # anything written must come from this step
        obs, _, terminals, truncations, _ = env.step(np.array([action], np.int32))
        raw_obs, _, terminated, truncated, _ = raw.step(action)
        assert (terminals[0], truncations[0]) == (terminated, truncated)
        if terminated or truncated:
            ended["terminal" if terminated else "truncation"] += 1
            np.testing.assert_array_equal(env.final_observations[0], raw_obs)
            raw_obs, _ = raw.reset()
        else:
            assert np.isnan(env.final_observations).all()  # nothing written on other steps
        np.testing.assert_array_equal(obs[0], raw_obs)
    assert ended["terminal"] > 3 and ended["truncation"] > 3


def test_envs_without_final_observations_say_so() -> None:
    with make(DeterministicEnv, 2) as vec:
        assert vec.final_observations is None and vec.buf.final_observations is None


@pytest.mark.parametrize(
    ("backend", "batch_size", "zero_copy"),
    [
        ("serial", 4, True),
        ("multiprocessing", 4, True),
        ("multiprocessing", 2, True),
        ("multiprocessing", 2, False),
    ],
    ids=["serial", "multiprocessing-sync", "multiprocessing-async", "multiprocessing-gather"],
)
def test_vectorizer_final_observations_match_raw_envs(backend, batch_size, zero_copy) -> None:
    with make(
        "gym-CartPole-v1",
        4,
        backend=backend,
        num_workers=4 if backend == "multiprocessing" else 2,
        instances_per_recv=batch_size,
        zero_copy=zero_copy,
        env_kwargs=KWARGS,
    ) as vec:
        check_final_observations(vec, raw_env, STEPS)


def _lockstep(ours: VectorEnv, mode: AutoresetMode, seed: int) -> Iterator[tuple]:
    """Step `ours` and Gymnasium's SyncVectorEnv in `mode` with the same random actions for
    STEPS steps, checking that both return the same arrays; yield (our infos, theirs, ours)."""
    theirs = SyncVectorEnv([raw_env] * 4, autoreset_mode=mode)
    assert ours.metadata["autoreset_mode"] == mode
    np.testing.assert_array_equal(ours.reset(seed=seed)[0], theirs.reset(seed=seed)[0])
    rng = np.random.default_rng(seed)
    for _ in range(STEPS):
        actions = rng.integers(0, 2, 4)
        got = ours.step(actions.astype(np.int32))
        want = theirs.step(actions)
        for array, expected in zip(got[:4], want[:4], strict=True):
            np.testing.assert_array_equal(array, expected)
        yield got[4], want[4], got
    ours.close()
    theirs.close()


def test_gym_adapter_infos_match_gymnasium_same_step_autoreset() -> None:
    ours = VectorEnv(make("gym-CartPole-v1", 4, num_workers=2, env_kwargs=KWARGS))
    ended = 0
    for infos, want, _ in _lockstep(ours, AutoresetMode.SAME_STEP, seed=7):
        if "final_obs" not in want:
            assert "final_obs" not in infos
            continue
        ended += int(want["_final_obs"].sum())
        np.testing.assert_array_equal(infos["_final_obs"], want["_final_obs"])
        np.testing.assert_array_equal(infos["_final_info"], want["_final_info"])
        lengths = infos["final_info"]["episode_length"][infos["_final_info"]]
        assert (lengths >= 1).all() and (lengths <= KWARGS["max_episode_steps"]).all()
        for got, expected in zip(infos["final_obs"], want["final_obs"], strict=True):
            assert (got is None) == (expected is None)
            if got is not None:
                np.testing.assert_array_equal(got, expected)
    assert ended > 8


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
def test_gym_adapter_next_step_matches_gymnasium_next_step(backend) -> None:
    ours = make_gym(
        "gym-CartPole-v1",
        4,
        autoreset_mode=AutoresetMode.NEXT_STEP,
        backend=backend,
        num_workers=2,
        env_kwargs=KWARGS,
    )
    returns = np.zeros(4)
    ended = 0
    for infos, _, (_, rewards, terminations, truncations, _) in _lockstep(
        ours, AutoresetMode.NEXT_STEP, seed=3
    ):
        returns += rewards
        done = terminations | truncations
        assert "final_obs" not in infos and "final_info" not in infos
        if done.any():
            np.testing.assert_array_equal(infos["_episode_return"], done)
            np.testing.assert_array_equal(infos["episode_return"][done], returns[done])
            returns[done] = 0.0
            ended += int(done.sum())
        else:
            assert infos == {}
    assert ended > 8


def test_gym_adapter_next_step_refuses_native_envs() -> None:
    with pytest.raises(APIUsageError, match=r"NEXT_STEP for 'breakout': only emulated Gymnasium"):
        make_gym("breakout", 2, autoreset_mode=AutoresetMode.NEXT_STEP)
