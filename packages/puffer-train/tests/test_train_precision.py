"""`train.matmul_precision`: the float32 matrix-product precision a run sets for its process."""

from __future__ import annotations

import math

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.config import ConfigError


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
    torch.manual_seed(0)
    env = make("squared", num_envs=16)
    config = TrainConfig(
        horizon=16,
        minibatch_size=128,
        total_timesteps=512,
        device="cpu",
        seed=0,
        matmul_precision=precision,
    )
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=16, recurrent="lstm"), env))
    assert torch.get_float32_matmul_precision() == precision
    trainer.evaluate()
    losses = trainer.train()
    trainer.close()
    env.close()
    assert all(math.isfinite(value) for value in losses.values())
    assert all(p.dtype == torch.float32 for p in trainer.policy.parameters())
