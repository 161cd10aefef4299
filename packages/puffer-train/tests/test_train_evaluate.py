"""`evaluate_episodes` counts the episodes the env reports (a dict of `n` counts n), stops where
its caller or `max_steps` says, and `episode_means` weighs each dict by its episodes."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
import torch
from gymnasium import spaces

import puffer.train.evaluate
from puffer.core import PufferEnv
from puffer.train import PolicyConfig, evaluate_episodes, make_policy
from puffer.train.evaluate import episode_count, episode_means, one_instance


class BatchedLogEnv(PufferEnv):
    """Reports, every `every` steps, one dict of means over `n` episodes (as Ocean envs do);
    the reported score is the step count, so each dict is told apart."""

    def __init__(self, every: int = 2, n: int = 3, buf=None):
        self.num_agents = 2
        self.single_observation_space = spaces.Box(-1.0, 1.0, (3,), np.float32)
        self.single_action_space = spaces.Discrete(2)
        self.every, self.n = every, n
        super().__init__(buf)

    def _reset(self, seed):
        self.t = 0
        self.observations[:] = 0.0
        return []

    def _step(self):
        self.t += 1
        return [{"score": float(self.t), "n": self.n}] if self.t % self.every == 0 else []


def _policy(env: PufferEnv):
    torch.manual_seed(0)
    return make_policy(PolicyConfig(hidden_size=8), env)


def test_episodes_are_counted_by_n_and_the_dicts_that_hold_them_returned() -> None:
    env = BatchedLogEnv()
    stats = evaluate_episodes(_policy(env), env, episodes=7, seed=0)
    # Dicts of 3 episodes at steps 2, 4, 6: the third one completes 7 episodes.
    assert [s["score"] for s in stats] == [2.0, 4.0, 6.0]
    assert episode_count(stats) == 9 and env.t == 6
    env.close()


def test_on_step_sees_the_reset_and_every_step_and_can_stop() -> None:
    env = BatchedLogEnv()
    seen: list[int] = []

    def on_step(so_far: list[dict[str, float]]) -> bool:
        seen.append(len(so_far))
        return len(seen) < 4  # the reset and three steps

    stats = evaluate_episodes(_policy(env), env, episodes=100, seed=0, on_step=on_step)
    assert seen == [0, 0, 1, 1] and env.t == 3 and len(stats) == 1
    env.close()


def test_max_steps_counts_agent_steps() -> None:
    env = BatchedLogEnv()  # two agent rows per step
    assert evaluate_episodes(_policy(env), env, episodes=100, max_steps=10) == [
        {"score": 2.0, "n": 3.0},
        {"score": 4.0, "n": 3.0},
    ]
    assert env.t == 5
    env.close()


def test_an_ocean_instance_reports_whole_episodes_with_their_returns() -> None:
    env = one_instance("squared", {})
    assert env.num_envs == 1 and env.log_interval == 1 and env.render_mode == "rgb_array"
    stats = evaluate_episodes(_policy(env), env, episodes=5, seed=0)
    assert episode_count(stats) >= 5
    means = episode_means(stats)
    assert {"episode_return", "episode_length"} <= set(means) and "n" not in means
    assert means["episode_length"] >= 1
    env.close()


def test_episode_means_weigh_each_dict_by_its_episodes() -> None:
    means = episode_means([{"a": 1.0, "b": 2.0}, {"a": 5.0, "n": 3.0}])
    assert means == pytest.approx({"a": 4.0, "b": 2.0})
    assert list(means) == ["a", "b"]


def test_docstring_examples() -> None:
    result = doctest.testmod(puffer.train.evaluate)
    assert result.failed == 0 and result.attempted > 0


def test_the_trainer_weighs_episodes_as_evaluation_does() -> None:
    # One weighting rule (`episode_weight`): the trainer's per-episode running means equal
    # evaluation's `episode_means` of the same stat dicts, `n` counted, `n` itself not a stat.
    from puffer.core import make
    from puffer.train import PuffeRL, TrainConfig

    infos = [{"score": 1.0, "n": 3.0}, {"score": 5.0}, {"score": 2.0, "length": 4.0, "n": 2.0}]
    env = make("gym-CartPole-v1")
    config = TrainConfig(horizon=8, minibatch_size=8, total_timesteps=16, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
    try:
        trainer._add_stats(infos)
        means = {key: float(np.mean(values)) for key, values in trainer.stats.items()}
        assert means == pytest.approx(episode_means(infos))
        assert "n" not in trainer.stats and len(trainer.stats["score"]) == episode_count(infos)
    finally:
        trainer.close()
        env.close()
