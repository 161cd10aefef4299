"""Truncation bootstraps from V(final obs), not from V(o_t).

The env alternates two states, A (reward 10 for leaving it) and B (reward 0), and is always
truncated after two steps: A -> B -> truncated, with A as the final observation. Continuing
values are V(A) = 10 + g V(B) and V(B) = g V(A), so the last state B must learn
V(B) = 0 + g V(final obs = A). The old stand-in bootstraps B from V(B) itself and drives it to 0.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
import torch
from gymnasium import spaces

import puffer.vector
from puffer.core import GymnasiumPufferEnv
from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.advantage import puff_advantage

GAMMA = 0.9
REWARD_A = 10.0


class _TwoStep(gymnasium.Env):
    """A -> B -> (truncated, final observation A); the action does not matter."""

    observation_space = spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def _obs(self) -> np.ndarray:
        return np.eye(2, dtype=np.float32)[self.state]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state, self.t = 0, 0
        return self._obs(), {}

    def step(self, action):
        reward = REWARD_A if self.state == 0 else 0.0
        self.state, self.t = 1 - self.state, self.t + 1
        return self._obs(), reward, False, self.t >= 2, {}


class _NoFinalObs(GymnasiumPufferEnv):
    """The same env without a final-observation side array: the old V(o_t) stand-in."""

    writes_final_observations = False


def _learned_values(env_class: type) -> tuple[float, float]:
    vecenv = puffer.vector.make(
        lambda buf=None, seed=None: env_class(_TwoStep(), buf=buf, seed=seed),
        num_instances=4,
        seed=0,
    )
    train = TrainConfig(
        total_timesteps=6_400,
        horizon=16,
        minibatch_size=64,
        update_epochs=4,
        gamma=GAMMA,
        gae_lambda=0.95,
        optimizer="adam",
        learning_rate=0.01,
        vf_coef=1.0,
        vf_clip_coef=1000.0,
        ent_coef=0.0,
        prio_alpha=0.0,
        reward_clip=0.0,  # the values below are for the reward as given
        device="cpu",
        seed=0,
    )
    config = Config(train=train, policy=PolicyConfig(hidden_size=32))
    torch.manual_seed(0)
    trainer = PuffeRL(config, vecenv, make_policy(config.policy, vecenv))
    try:
        while trainer.iteration < trainer.sizes.iterations:
            trainer.collect()
            trainer.train()
        with torch.no_grad():
            _, values, _ = trainer.policy.forward_eval(torch.eye(2), ())
    finally:
        trainer.close()
        vecenv.close()
    value_a, value_b = values.tolist()
    return value_a, value_b


def test_truncation_bootstraps_from_the_final_observation() -> None:
    value_a, value_b = _learned_values(GymnasiumPufferEnv)
    # By construction V(final obs) = V(A) and V(o_T) = V(B) differ (52.6 vs 47.4).
    assert value_a == pytest.approx(REWARD_A / (1 - GAMMA**2), rel=0.05)
    assert value_b == pytest.approx(0.0 + GAMMA * value_a, rel=0.05)


def test_the_old_stand_in_fails_the_same_check() -> None:
    value_a, value_b = _learned_values(_NoFinalObs)
    assert value_b != pytest.approx(0.0 + GAMMA * value_a, rel=0.05)


def test_final_values_give_the_advantages_of_the_old_reward_rewrite() -> None:
    # Before, the kernel bootstrapped truncated rows from V_t and the trainer rewrote their
    # reward to r + gamma * (V(final obs) - V_t); now the kernel reads V(final obs) itself. On a
    # real rollout (a truncation every other step, inside segments) both give the same
    # advantages to float rounding.
    vecenv = puffer.vector.make(
        lambda buf=None, seed=None: GymnasiumPufferEnv(_TwoStep(), buf=buf, seed=seed),
        num_instances=4,
        seed=0,
    )
    train = TrainConfig(horizon=16, minibatch_size=64, total_timesteps=64, device="cpu")
    config = Config(train=train, policy=PolicyConfig(hidden_size=32))
    torch.manual_seed(0)
    trainer = PuffeRL(config, vecenv, make_policy(config.policy, vecenv))
    try:
        trainer.collect()
        buf, segments = trainer.buffer, trainer.sizes.segments
        values, rewards = buf.values[:segments], buf.rewards[:segments]
        terminals, truncations = buf.terminals[:segments], buf.truncations[:segments]
        final_values, next_values = buf.final_values[:segments], buf.next_values[:segments]
        assert truncations[:, :-1].any(), "truncations must fall inside segments"
        hyper = (train.gamma, train.gae_lambda, train.vtrace_rho_clip, train.vtrace_c_clip)
        ones = torch.ones_like(values)
        new = puff_advantage(
            values, rewards, terminals, truncations, final_values, ones, next_values, *hyper
        )
        cut = truncations * (1 - terminals)
        rewritten = rewards + train.gamma * cut * (final_values - values)
        old = puff_advantage(
            values, rewritten, terminals, truncations, values, ones, next_values, *hyper
        )
    finally:
        trainer.close()
        vecenv.close()
    difference = (new - old).abs().max().item()
    assert difference < 1e-5 * max(1.0, new.abs().max().item()), difference
    # The bootstrap is V(final obs) = V(A), not V(B) = V_t: the two differ on these rows.
    assert (final_values - values)[cut > 0].abs().min() > 0
