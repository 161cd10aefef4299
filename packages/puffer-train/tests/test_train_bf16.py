"""`train.precision` 'bfloat16': the policy's passes under autocast, float32 master weights,
gradients and optimizer (`puffer.train.precision`)."""

from __future__ import annotations

import math

import pytest
import torch

from puffer.core import make
from puffer.kernels import lstm_sequence, mingru_scan
from puffer.kernels.testing import assert_relative_close
from puffer.train import (
    Config,
    PolicyConfig,
    PuffeRL,
    TrainConfig,
    apply_torch_settings,
    make_policy,
)
from puffer.train.config import ConfigError
from puffer.train.optim import FlatMuon
from puffer.train.precision import compute, policy_outputs

PUFFERNET = PolicyConfig(network="puffernet", recurrent="mingru", hidden_size=64, mingru_layers=2)


def test_the_default_is_float32_and_a_wrong_value_names_the_key() -> None:
    assert TrainConfig().precision == "float32"
    with pytest.raises(ConfigError, match="precision"):
        TrainConfig(precision="float16")


def _pair():
    """Two PufferNets of the same weights for breakout, and a training batch for them."""
    env = make("breakout", num_envs=2)
    torch.manual_seed(0)
    full, half = make_policy(PUFFERNET, env), make_policy(PUFFERNET, env)
    half.load_state_dict(full.state_dict())
    env.close()
    generator = torch.Generator().manual_seed(1)
    obs = torch.rand(8, 16, *env.single_observation_space.shape, generator=generator)
    state = tuple(s.normal_(generator=generator) for s in full.initial_state(8, "cpu"))
    starts = torch.rand(8, 16, generator=generator) < 0.1
    return full, half, (obs, state, starts)


def test_bfloat16_computes_the_products_in_bfloat16_and_hands_back_float32() -> None:
    full, half, batch = _pair()
    want_params, want_value = full.forward_train(*batch)
    with compute("bfloat16", torch.device("cpu")):
        raw_params, raw_value = half.forward_train(*batch)
    assert raw_params.dtype == raw_value.dtype == torch.bfloat16  # the decoder ran in bf16
    params, value = policy_outputs(raw_params, raw_value)
    assert params.dtype == value.dtype == torch.float32
    assert not torch.equal(params, want_params)
    assert_relative_close(params, want_params, 3e-2)
    assert_relative_close(value, want_value, 3e-2)
    assert all(p.dtype == torch.float32 for p in half.parameters())


def test_bfloat16_gradients_reach_the_float32_flat_buffer_close_to_float32s() -> None:
    full, half, batch = _pair()
    optimizers = [FlatMuon(list(p.parameters()), lr=0.1) for p in (full, half)]
    for policy, precision in ((full, "float32"), (half, "bfloat16")):
        with compute(precision, torch.device("cpu")):
            params, value = policy.forward_train(*batch)
        params, value = policy_outputs(params, value)
        (params.logsumexp(-1).sum() + value.square().sum()).backward()
    want, got = (o.flat.grad for o in optimizers)
    assert got.dtype == torch.float32 and got.abs().sum() > 0
    assert_relative_close(got, want, 5e-2)
    optimizers[1].flat.check_bound("test")


def test_the_recurrent_kernel_runs_in_float32_on_bfloat16_products() -> None:
    """Under autocast the compiled MinGRU scan gets float32 copies of its bfloat16 inputs:
    the same values, bit for bit, as the scan of those copies outside autocast."""
    generator = torch.Generator().manual_seed(2)
    pre = torch.randn(4, 8, 48, generator=generator).bfloat16()
    x, h0 = torch.randn(4, 8, 16, generator=generator), torch.randn(4, 16, generator=generator)
    starts = torch.rand(4, 8, generator=generator) < 0.2
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = mingru_scan(pre, x, h0, starts)
    assert got.dtype == torch.float32
    assert torch.equal(got, mingru_scan(pre.float(), x, h0, starts))


def test_a_bfloat16_run_trains_on_float32_master_weights() -> None:
    config = TrainConfig(
        horizon=16, minibatch_size=256, total_timesteps=1024, device="cpu", seed=0,
        precision="bfloat16",
    )  # fmt: skip
    apply_torch_settings(Config(train=config))
    env = make("breakout", num_envs=32)
    try:
        trainer = PuffeRL(config, env, make_policy(PUFFERNET, env))
        before = trainer.optimizer.flat.data.clone()
        trainer.collect()
        losses = trainer.train()
        assert all(math.isfinite(v) for v in losses.values())
        assert trainer.optimizer.flat.data.dtype == torch.float32
        assert not torch.equal(trainer.optimizer.flat.data, before)
        trainer.optimizer.flat.check_bound("test")
        trainer.close()
    finally:
        env.close()


def test_the_lstm_kernel_runs_in_float32_under_autocast() -> None:
    """The LSTM's sequence kernel likewise: its input projection is a product inside it, and
    runs in float32 too (autocast is off in the kernel's body)."""
    generator = torch.Generator().manual_seed(3)
    x = torch.randn(3, 6, 8, generator=generator).bfloat16()
    h0, c0 = (torch.randn(3, 4, generator=generator) for _ in range(2))
    weights = [torch.randn(s, generator=generator) for s in ((16, 8), (16, 4), (16,), (16,))]
    starts = torch.rand(3, 6, generator=generator) < 0.2
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = lstm_sequence(x, h0, c0, starts, *weights)
    assert got.dtype == torch.float32
    assert torch.equal(got, lstm_sequence(x.float(), h0, c0, starts, *weights))
