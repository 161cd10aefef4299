"""The one rollout path: the trainer and `evaluate_episodes` (which `puffer eval` runs) act
through `Rollout`, so they send the same actions (mapped into the space, the buffer dtype) and
cut the recurrent state the same way."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from puffer.core import PufferEnv
from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, evaluate_episodes, make_policy
from puffer.train.config import ConfigError
from puffer.train.rollout import Rollout

LOW, HIGH = -0.05, 0.1


class RecordingEnv(PufferEnv):
    """2-D Box actions in [LOW, HIGH]; records every action batch it is sent. Episodes end
    every 5 steps (terminal) with a stat dict."""

    def __init__(self, num_agents: int = 4, buf=None):
        self.num_agents = num_agents
        self.single_observation_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.single_action_space = spaces.Box(LOW, HIGH, (2,), np.float32)
        self.sent: list[np.ndarray] = []
        super().__init__(buf)

    def _reset(self, seed):
        self.t = 0
        self.observations[:] = 1.0
        return []

    def _step(self):
        self.sent.append(self.actions.copy())
        self.t += 1
        self.rewards[:] = self.actions.sum(axis=1)
        self.terminals[:] = self.t % 5 == 0
        self.observations[:, 0] = self.t
        return [{"episode_return": 1.0}] * self.num_agents if self.t % 5 == 0 else []

    def render(self):
        return np.zeros((4, 4, 3), np.uint8)


def _policy(env: PufferEnv, recurrent: str = "none"):
    torch.manual_seed(0)
    policy = make_policy(PolicyConfig(hidden_size=8, recurrent=recurrent), env)
    # A wide Gaussian: most samples fall outside [LOW, HIGH].
    with torch.no_grad():
        policy.head.log_std.fill_(1.0)  # type: ignore[union-attr]
    return policy


def _check_sent(env: RecordingEnv) -> None:
    sent = np.concatenate(env.sent)
    assert sent.dtype == np.float32
    assert sent.min() == pytest.approx(LOW) and sent.max() == pytest.approx(HIGH)


def test_trainer_and_evaluate_episodes_both_clip_to_the_space() -> None:
    env = RecordingEnv()
    policy = _policy(env)
    config = TrainConfig(horizon=5, minibatch_size=20, total_timesteps=40, device="cpu")
    trainer = PuffeRL(config, env, policy)
    trainer.collect()
    _check_sent(env)
    # The buffer keeps the policy's own (unclipped) sample: its log-prob is the one stored.
    assert trainer.buffer.actions.abs().max() > HIGH

    env.sent.clear()
    assert len(evaluate_episodes(policy, env, episodes=8, seed=1)) == 8
    _check_sent(env)
    env.close()


@pytest.mark.parametrize("box_actions", ["map", "clip"])
def test_box_actions_map_from_unit_range_or_clip_in_env_units(box_actions: str) -> None:
    env = RecordingEnv()
    policy = make_policy(PolicyConfig(hidden_size=8, box_actions=box_actions), env)
    rollout = Rollout(policy, env)
    rollout.reset(seed=0)
    step = rollout.forward(rollout.recv())
    action = torch.tensor([[-3.0, -0.5], [0.0, 0.07], [0.5, 3.0], [-0.02, 1.0]])
    rollout.send(step, action)
    low, high = torch.tensor(LOW), torch.tensor(HIGH)
    if box_actions == "map":  # [-1, 1] onto [LOW, HIGH]
        expected = low + (action.clamp(-1.0, 1.0) + 1.0) * (0.5 * (high - low))
    else:  # the env's own units, cut at its bounds
        expected = action.clamp(low, high)
    np.testing.assert_allclose(env.sent[-1], expected.numpy(), rtol=0, atol=1e-7)
    env.close()


def test_an_unknown_box_actions_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"box_actions is 'squash'.*'map', 'clip'"):
        PolicyConfig(box_actions="squash")


def test_recurrent_state_is_cut_where_an_episode_ended() -> None:
    env = RecordingEnv(num_agents=2)
    policy = _policy(env, "lstm")
    rollout = Rollout(policy, env)
    rollout.reset(seed=0)
    step = rollout.recv()
    for t in range(1, 6):
        rollout.act(step)
        step = rollout.recv()
        rollout.forward(step)
        if t < 5:
            assert all(s.abs().sum() > 0 for s in step.state)
    # The 5th step ended every episode: the policy saw a zero state for the new one.
    assert all(torch.equal(s, torch.zeros_like(s)) for s in step.state)
    env.close()


def test_held_step_survives_a_checkpoint_round_trip() -> None:
    env = RecordingEnv(num_agents=2)
    policy = _policy(env, "lstm")
    config = Config(
        train=TrainConfig(horizon=3, minibatch_size=6, total_timesteps=60, device="cpu"),
        policy=PolicyConfig(hidden_size=8, recurrent="lstm"),
    )
    trainer = PuffeRL(config, env, policy)
    trainer.collect()
    saved = trainer.rollout.held_state()
    assert saved["held"] is not None and saved["held"]["obs"].shape == (2, 3)
    other = Rollout(policy, RecordingEnv(num_agents=2))
    other.load_held_state(saved)
    held = other.take_held()
    assert held is not None and torch.equal(held.obs, trainer.rollout.held.obs)
    assert all(torch.equal(a, b) for a, b in zip(other.state, trainer.rollout.state, strict=True))
    env.close()


@pytest.mark.parametrize("recurrent_state", ["carry", "zero"])
def test_recurrent_state_at_an_epoch_start(recurrent_state: str) -> None:
    """'carry' acts and replays the second iteration's segments (which start mid-episode: episodes
    last 5 steps, segments 3) from the state the first iteration left; 'zero' from zeros."""
    env = RecordingEnv(num_agents=2)
    config = Config(
        train=TrainConfig(
            horizon=3, minibatch_size=6, total_timesteps=60, device="cpu",
            recurrent_state=recurrent_state,
        ),
        policy=PolicyConfig(hidden_size=8, recurrent="lstm"),
    )  # fmt: skip
    trainer = PuffeRL(config, env, _policy(env, "lstm"))
    for _ in range(2):
        trainer.collect()
        starts = [s[: trainer.sizes.segments] for s in trainer.buffer.states]
        zero = all(torch.equal(s, torch.zeros_like(s)) for s in starts)
        assert zero == (recurrent_state == "zero" or trainer.iteration == 0)
        trainer.train()
    env.close()


def test_state_rows_are_a_slice_for_consecutive_agents_else_an_index() -> None:
    """A batch of consecutive agents (an env buffer's, a zero-copy batch's) reads and writes
    its recurrent state through a slice; any other batch through an index of its rows."""
    env = RecordingEnv(num_agents=6)
    rollout = Rollout(_policy(env, "lstm"), env)
    assert rollout._state_rows(np.arange(2, 5)) == slice(2, 5)
    for ids in ([0, 2, 1], [1, 3, 5]):  # the same span but out of order; gaps
        assert torch.equal(rollout._state_rows(np.array(ids)), torch.tensor(ids))
    env.close()
