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
        num_envs=4,
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
        while trainer.epoch < trainer.sizes.epochs:
            trainer.evaluate()
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
