"""Microbatches: a minibatch run in several forward/backward passes makes the same update as one
pass, and `train.microbatch_size` 0 picks the pass size by device."""

from __future__ import annotations

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.config import Sizes
from puffer.train.update import CPU_MICROBATCH, microbatch_segments


def _update(
    microbatch_size: int, recurrent: str
) -> tuple[list[torch.Tensor], list[torch.Tensor], dict]:
    """Initial parameters, parameters and losses after one update of 2 passes over a 512-step
    batch in minibatches of 256 steps (4 optimizer steps).

    Adam, not the default Muon: Muon orthogonalizes in bfloat16, so the last-bit differences that
    any change of summation order makes in a gradient (passes, or a machine's thread count: seen
    on a 16-core box) can flip bfloat16 roundings and move parameters by 1e-4. Adam's float32
    update keeps equal gradients equal to float precision, which is what this test compares."""
    torch.manual_seed(0)
    env = make("squared", num_envs=32)
    config = TrainConfig(
        horizon=16,
        minibatch_size=256,
        microbatch_size=microbatch_size,
        update_epochs=2,
        total_timesteps=1024,
        device="cpu",
        seed=0,
        optimizer="adam",
    )
    policy = make_policy(PolicyConfig(hidden_size=16, recurrent=recurrent), env)
    trainer = PuffeRL(config, env, policy)
    initial = [p.detach().clone() for p in trainer.policy.parameters()]
    trainer.collect()
    losses = trainer.train()
    params = [p.detach().clone() for p in trainer.policy.parameters()]
    trainer.close()
    env.close()
    return initial, params, losses


@pytest.mark.parametrize("recurrent", ["none", "lstm"])
def test_passes_make_the_same_update_as_one(recurrent: str) -> None:
    initial, whole, whole_losses = _update(256, recurrent)
    _, parts, part_losses = _update(64, recurrent)  # 4 passes of 4 segments
    _, uneven, _ = _update(96, recurrent)  # passes of 6, 6 and 4 segments
    assert max((a - b).abs().max().item() for a, b in zip(initial, whole, strict=True)) > 1e-3
    for a, b, c in zip(whole, parts, uneven, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(c, a, rtol=1e-5, atol=1e-6)
    assert whole_losses.keys() == part_losses.keys()
    for key, value in whole_losses.items():
        assert part_losses[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key


def test_microbatch_size_zero_is_cache_sized_on_cpu_and_whole_on_gpus() -> None:
    sizes = Sizes.derive(TrainConfig(horizon=64, minibatch_size=32768), num_agents=1024)
    auto = TrainConfig(horizon=64, minibatch_size=32768)
    assert microbatch_segments(auto, sizes, torch.device("cpu")) == CPU_MICROBATCH // 64
    assert microbatch_segments(auto, sizes, torch.device("cuda")) == 512
    given = TrainConfig(horizon=64, minibatch_size=32768, microbatch_size=10_000)
    assert microbatch_segments(given, sizes, torch.device("cuda")) == 156  # whole segments
    huge = TrainConfig(horizon=64, minibatch_size=32768, microbatch_size=10**6)
    assert microbatch_segments(huge, sizes, torch.device("cpu")) == 512  # at most a minibatch
