"""`train.vtrace`: on, every minibatch's advantages are re-weighted by V-trace with the ratios
that the iteration's earlier minibatches left (PufferLib's trainer); off, the iteration trains on
plain GAE of its rollout, computed once (CleanRL and SB3)."""

from __future__ import annotations

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.advantage import puff_advantage


def _advantages_of_one_update(vtrace: bool, refresh_values: bool = False):
    """The advantages each minibatch of one update saw, the GAE of the rollout (ratios 1,
    rollout values) and the buffer's ratios after the update."""
    torch.manual_seed(0)
    env = make("squared", num_envs=16)
    config = TrainConfig(
        horizon=16,
        minibatch_size=64,
        update_epochs=2,
        total_timesteps=256,
        device="cpu",
        seed=0,
        optimizer="adam",
        learning_rate=0.01,
        vtrace=vtrace,
        refresh_values=refresh_values,
    )
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=16), env))
    seen: list[torch.Tensor] = []
    compute = trainer.update.advantages

    def recorded() -> torch.Tensor:
        seen.append(compute().clone())
        return seen[-1]

    trainer.update.advantages = recorded
    trainer.collect()
    buf, segments = trainer.buffer, trainer.sizes.segments
    gae = puff_advantage(
        buf.values[:segments].clone(),
        buf.rewards[:segments],
        buf.terminals[:segments],
        buf.truncations[:segments],
        buf.final_values[:segments],
        torch.ones_like(buf.ratio),
        buf.next_values[:segments],
        config.gamma,
        config.gae_lambda,
        config.vtrace_rho_clip,
        config.vtrace_c_clip,
    )
    trainer.train()
    ratio = buf.ratio.clone()
    minibatches = trainer.sizes.minibatches
    trainer.close()
    env.close()
    return seen, gae, ratio, minibatches


def test_without_vtrace_the_epoch_trains_on_the_rollouts_gae_computed_once() -> None:
    seen, gae, ratio, minibatches = _advantages_of_one_update(vtrace=False)
    assert minibatches == 8  # 256 steps, 64 per minibatch, 2 passes
    assert len(seen) == 1
    torch.testing.assert_close(seen[0], gae)
    assert torch.equal(ratio, torch.ones_like(ratio))  # no ratios kept for a V-trace


def test_with_vtrace_later_minibatches_see_the_ratios_earlier_ones_left() -> None:
    seen, gae, ratio, minibatches = _advantages_of_one_update(vtrace=True)
    assert len(seen) == minibatches
    torch.testing.assert_close(seen[0], gae)  # fresh data: every ratio is 1
    assert not torch.allclose(ratio, torch.ones_like(ratio))
    assert (seen[-1] - gae).abs().max().item() > 1e-4


@pytest.mark.parametrize("vtrace", [False, True])
def test_refreshed_values_recompute_the_advantages_either_way(vtrace: bool) -> None:
    seen, gae, _, minibatches = _advantages_of_one_update(vtrace, refresh_values=True)
    assert len(seen) == minibatches
    assert (seen[-1] - gae).abs().max().item() > 1e-4
