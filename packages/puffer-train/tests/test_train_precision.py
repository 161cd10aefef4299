"""`train.matmul_precision`, the float32 product precision a run sets for its process, and
`policy.encoder_dtype`, the dtype a policy's encoder computes in."""

from __future__ import annotations

import math

import pytest
import torch
from gymnasium import spaces

from puffer.core import APIUsageError, make
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
from puffer.train.policies import policy as policy_module


@pytest.fixture(autouse=True)
def _restore_precision():
    before = torch.get_float32_matmul_precision()
    yield
    torch.set_float32_matmul_precision(before)


def test_the_default_is_float32() -> None:
    assert TrainConfig().matmul_precision == "highest"


def test_an_unknown_precision_names_the_key() -> None:
    with pytest.raises(ConfigError, match="matmul_precision"):
        TrainConfig(matmul_precision="bfloat16")


@pytest.mark.parametrize("precision", ["medium", "highest"])
def test_a_run_sets_its_precision_and_trains(precision: str) -> None:
    # The other value first: the run must set its own, not inherit the process's.
    torch.set_float32_matmul_precision("highest" if precision == "medium" else "medium")
    precision_seen = _one_epoch_trains(
        TrainConfig(**_SMALL_RUN, matmul_precision=precision),
        PolicyConfig(hidden_size=16, recurrent="lstm"),
    )
    assert precision_seen == precision


def test_the_trainer_refuses_a_process_not_set_for_its_config() -> None:
    # apply_torch_settings is the one owner of the settings; PuffeRL only checks them.
    torch.set_float32_matmul_precision("medium")
    env = make("squared", num_envs=16)
    try:
        policy = make_policy(PolicyConfig(hidden_size=16), env)
        with pytest.raises(APIUsageError, match=r"precision is 'medium' .*apply_torch_settings"):
            PuffeRL(TrainConfig(**_SMALL_RUN), env, policy)
        assert torch.get_float32_matmul_precision() == "medium"  # checked, not set
    finally:
        env.close()


_SMALL_RUN = dict(horizon=16, minibatch_size=128, total_timesteps=512, device="cpu", seed=0)


def _one_epoch_trains(config: TrainConfig, policy_config: PolicyConfig) -> str:
    """Run one epoch on the 'squared' env; assert finite losses and float32 parameters.
    Returns the matmul precision the run had set."""
    apply_torch_settings(Config(train=config))
    torch.manual_seed(0)
    env = make("squared", num_envs=16)
    trainer = PuffeRL(config, env, make_policy(policy_config, env))
    precision = torch.get_float32_matmul_precision()
    trainer.collect()
    losses = trainer.train()
    trainer.close()
    env.close()
    assert all(math.isfinite(value) for value in losses.values())
    assert all(p.dtype == torch.float32 for p in trainer.policy.parameters())
    return precision


class _Frames:
    single_observation_space = spaces.Box(0, 255, (4, 84, 84), "uint8")
    single_action_space = spaces.Discrete(6)


def _cnn_pair() -> tuple[torch.nn.Module, torch.nn.Module]:
    """Two NatureCNN policies with the same weights, encoders in float32 and in bfloat16."""
    torch.manual_seed(0)
    full = make_policy(PolicyConfig(encoder="nature_cnn", hidden_size=64), _Frames())
    half = make_policy(
        PolicyConfig(encoder="nature_cnn", hidden_size=64, encoder_dtype="bfloat16"), _Frames()
    )
    half.load_state_dict(full.state_dict())
    return full, half


def test_an_unknown_encoder_dtype_names_the_key() -> None:
    with pytest.raises(ConfigError, match="encoder_dtype"):
        PolicyConfig(encoder_dtype="float16")


def test_a_bfloat16_encoder_hands_float32_to_the_heads_and_stays_close() -> None:
    full, half = _cnn_pair()
    obs = torch.randint(0, 256, (2, 8, 4, 84, 84), dtype=torch.uint8)
    want_params, want_value = full.forward_train(obs, (), None)
    params, value = half.forward_train(obs, (), None)
    assert params.dtype == value.dtype == torch.float32
    # bfloat16 keeps 8 bits of mantissa: close to float32, and not equal to it (it ran).
    assert not torch.equal(params, want_params)
    assert_relative_close(params, want_params, 3e-2)
    assert_relative_close(value, want_value, 3e-2)
    eval_params, _, _ = half.forward_eval(obs[:, 0], ())
    assert_relative_close(eval_params, params[:, 0], 1e-2)


def test_a_bfloat16_encoder_gets_float32_gradients_close_to_float32s() -> None:
    full, half = _cnn_pair()
    obs = torch.randint(0, 256, (4, 8, 4, 84, 84), dtype=torch.uint8)
    for policy in (full, half):
        params, value = policy.forward_train(obs, (), None)
        (params.logsumexp(-1).sum() + value.square().sum()).backward()
    for (name, want), got in zip(full.named_parameters(), half.parameters(), strict=True):
        assert got.grad.dtype == torch.float32, name
        assert_relative_close(got.grad, want.grad, 5e-2)


@pytest.mark.parametrize("native", [False, True])
def test_auto_computes_in_bfloat16_where_the_device_has_it(monkeypatch, native: bool) -> None:
    full, half = _cnn_pair()
    auto = make_policy(
        PolicyConfig(encoder="nature_cnn", hidden_size=64, encoder_dtype="auto"), _Frames()
    )
    auto.load_state_dict(full.state_dict())
    monkeypatch.setattr(policy_module, "native_bfloat16", lambda device: native)
    obs = torch.randint(0, 256, (2, 4, 4, 84, 84), dtype=torch.uint8)
    want, _ = (half if native else full).forward_train(obs, (), None)
    got, _ = auto.forward_train(obs, (), None)
    assert torch.equal(got, want)


def test_native_bfloat16_follows_the_cpu_flags() -> None:
    flags = set()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    if not flags:
        pytest.skip("no CPU flags in /proc/cpuinfo (not x86 Linux)")
    want = "avx512_bf16" in flags or "amx_tile" in flags
    assert policy_module.native_bfloat16(torch.device("cpu")) == want


def test_a_run_with_a_bfloat16_encoder_trains() -> None:
    _one_epoch_trains(
        TrainConfig(**_SMALL_RUN), PolicyConfig(hidden_size=16, encoder_dtype="bfloat16")
    )
