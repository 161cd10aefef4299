"""`puffer.vector.sb3.VecEnv`: SB3's VecEnv API over puffer vectorizers, down to PPO learning."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from puffer.core import APIUsageError
from puffer.vector import make
from puffer.vector.testing import sb3_cartpole_ppo_kwargs

sb3 = pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.evaluation import evaluate_policy  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor  # noqa: E402

from puffer.vector.sb3 import VecEnv  # noqa: E402

KWARGS = {"max_episode_steps": 12}


def raw_env() -> gymnasium.Env:
    return gymnasium.make("CartPole-v1", **KWARGS)


@pytest.mark.parametrize("backend", ["serial", "multiprocessing"])
def test_steps_match_sb3_dummy_vec_env(backend: str) -> None:
    ours = VecEnv(make("gym-CartPole-v1", 4, backend=backend, num_workers=2, env_kwargs=KWARGS))
    theirs = DummyVecEnv([raw_env] * 4)
    ours.seed(11)
    theirs.seed(11)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    rng = np.random.default_rng(0)
    truncated = terminal = 0
    for _ in range(300):
        actions = rng.integers(0, 2, 4)
        obs, rewards, dones, infos = ours.step(actions)
        want_obs, want_rewards, want_dones, want_infos = theirs.step(actions)
        np.testing.assert_array_equal(obs, want_obs)
        np.testing.assert_array_equal(rewards, want_rewards)
        np.testing.assert_array_equal(dones, want_dones)
        for info, want in zip(infos, want_infos, strict=True):
            assert ("terminal_observation" in info) == ("terminal_observation" in want)
            if "terminal_observation" in want:
                np.testing.assert_array_equal(
                    info["terminal_observation"], want["terminal_observation"]
                )
                assert info["TimeLimit.truncated"] == want["TimeLimit.truncated"]
                truncated += want["TimeLimit.truncated"]
                terminal += not want["TimeLimit.truncated"]
    assert truncated > 10 and terminal > 5
    obs = ours.reset()
    obs[:] = 99  # a copy: SB3 keeps the last observations across a step
    assert not (ours.vec.buf.observations == 99).any()
    ours.close()
    theirs.close()


def test_env_access_and_errors() -> None:
    env = VecEnv(make("gym-CartPole-v1", 2, backend="serial", env_kwargs={"render_mode": None}))
    assert env.num_envs == 2 and env.render_mode is None
    assert env.get_attr("spec", indices=[1])[0].id == "CartPole-v1"
    env.set_attr("custom", 5)
    assert env.get_attr("custom") == [5, 5]
    assert env.env_method("get_wrapper_attr", "custom", indices=0) == [5]
    assert env.env_is_wrapped(Monitor) == [False, False]
    assert env.env_is_wrapped(gymnasium.wrappers.TimeLimit) == [True, True]
    env.seed(3)
    with pytest.raises(APIUsageError, match=r"per-env seeds \[3, 9\].*seed\(s\) with one int"):
        env._seeds = [3, 9]
        env.reset()
    env.close()

    env = VecEnv(make("gym-CartPole-v1", 2, backend="multiprocessing", num_workers=2))
    assert env.get_attr("render_mode") == [None, None]
    assert env.env_is_wrapped(Monitor) == [False, False]
    with pytest.raises(APIUsageError, match=r"env_method\('close'\) needs .*backend='serial'"):
        env.env_method("close")
    env.reset()
    with pytest.raises(APIUsageError, match=r"action 7 at row 1 is outside Discrete\(2\)"):
        env.step(np.array([0, 7]))
    env.close()

    vec = make("gym-CartPole-v1", 4, num_workers=2, instances_per_recv=2)
    with pytest.raises(APIUsageError, match=r"instances_per_recv=2 < num_instances=4"):
        VecEnv(vec)
    vec.close()


def test_sb3_ppo_learns_cartpole() -> None:
    """A short budget (the full 100k-step zoo run, >= 475, is `benchmarks/sb3.py --learn`);
    seed 0 reaches 189 here, random play about 22."""
    torch.set_num_threads(1)
    env = VecMonitor(VecEnv(make("gym-CartPole-v1", 8, backend="serial", seed=0)))
    model = PPO("MlpPolicy", env, seed=0, **sb3_cartpole_ppo_kwargs())
    model.learn(24_000)
    evaluation = VecMonitor(VecEnv(make("gym-CartPole-v1", 4, backend="serial", seed=100)))
    mean, _ = evaluate_policy(model, evaluation, n_eval_episodes=8, deterministic=True)
    env.close()
    evaluation.close()
    assert mean >= 150, f"SB3 PPO through puffer: mean return {mean}"


def test_sb3_ppo_on_ocean_envs() -> None:
    torch.set_num_threads(1)
    # A native (C) env: every step is a bandit episode; arm 0 pays 0.8, the others 0.2.
    env = VecMonitor(VecEnv(make("bandit", 1, backend="serial", env_kwargs={"num_envs": 16})))
    assert env.num_envs == 16 and env.vec.final_observations is None
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0, learning_rate=3e-3)
    model.learn(4096)
    actions, _ = model.predict(np.ones((16, 1), np.float32), deterministic=True)
    assert (actions == 0).all(), actions
    env.close()
    # Box actions: SB3 clips them to the space, which puffer's action check then accepts.
    env = VecEnv(make("continuous", 1, backend="serial", env_kwargs={"num_envs": 8}))
    PPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0).learn(256)
    env.close()
