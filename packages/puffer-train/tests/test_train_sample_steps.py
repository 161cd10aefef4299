"""`train.sample_steps`: minibatches of single steps (CleanRL's shuffling) for feedforward
policies. One minibatch over the whole batch makes the same update as whole segments (the same
rows in another order); several minibatches draw steps from more segments than segments can;
a recurrent policy is refused."""

from __future__ import annotations

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.config import ConfigError


def _trainer(sample_steps: bool, minibatch_size: int) -> PuffeRL:
    torch.manual_seed(0)
    env = make("squared", num_envs=16)
    config = TrainConfig(
        horizon=16,
        minibatch_size=minibatch_size,
        update_epochs=1,
        total_timesteps=1024,
        prio_alpha=0.0,
        sample_steps=sample_steps,
        device="cpu",
        seed=0,
        optimizer="adam",  # float32 updates: equal gradients stay equal (see test_train_microbatch)
    )
    return PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=16), env))


def _one_update(sample_steps: bool, minibatch_size: int) -> tuple[list[torch.Tensor], dict]:
    trainer = _trainer(sample_steps, minibatch_size)
    trainer.collect()
    losses = trainer.train()
    params = [p.detach().clone() for p in trainer.policy.parameters()]
    trainer.close()
    trainer.vecenv.close()
    return params, losses


def test_one_minibatch_of_steps_makes_the_same_update_as_one_of_segments() -> None:
    segments, seg_losses = _one_update(False, 256)
    steps, step_losses = _one_update(True, 256)
    for a, b in zip(segments, steps, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
    for key, value in seg_losses.items():
        assert step_losses[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key


def test_minibatches_of_steps_draw_from_many_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """16 segments of 16 steps, minibatches of 32 steps: a segment minibatch holds 2 segments,
    a step minibatch steps of (almost surely) more than 2."""
    drawn: list[tuple[int, torch.Tensor]] = []  # (rows to draw from, rows drawn)
    multinomial = torch.multinomial

    def spy(probs: torch.Tensor, n: int, replacement: bool = False) -> torch.Tensor:
        idx = multinomial(probs, n, replacement=replacement)
        drawn.append((probs.shape[0], idx))
        return idx

    monkeypatch.setattr(torch, "multinomial", spy)
    for sample_steps in (False, True):
        drawn.clear()
        trainer = _trainer(sample_steps, 32)
        trainer.collect()
        trainer.train()
        trainer.close()
        trainer.vecenv.close()
        assert len(drawn) == 8  # 256 steps / 32
        for rows, idx in drawn:
            if sample_steps:
                assert rows == 256 and len(idx) == 32
                assert len(set((idx // 16).tolist())) > 2  # the segment of each step
            else:
                assert rows == 16 and len(idx) == 2


def test_a_recurrent_policy_cannot_sample_steps() -> None:
    env = make("squared", num_envs=16)
    config = TrainConfig(horizon=16, minibatch_size=256, sample_steps=True, device="cpu")
    policy = make_policy(PolicyConfig(hidden_size=16, recurrent="lstm"), env)
    try:
        with pytest.raises(ConfigError, match="sample_steps"):
            PuffeRL(config, env, policy)
    finally:
        env.close()
