"""A diverged update is refused with an error that names the loss and the fix, instead of
training on NaN parameters (sampling takes no host check, so nothing else would stop it)."""

from __future__ import annotations

import pytest
import torch

from puffer.core import PufferError, make
from puffer.train import DivergedError, PolicyConfig, PuffeRL, TrainConfig, make_policy


def test_nan_parameters_raise_diverged_error_at_the_epoch_end() -> None:
    env = make("squared", num_envs=8)
    config = TrainConfig(horizon=16, minibatch_size=128, total_timesteps=1024, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=16), env))
    trainer.collect()
    trainer.train()  # a finite update passes
    with torch.no_grad():
        for param in trainer.policy.parameters():
            param.fill_(float("nan"))
    trainer.collect()
    with pytest.raises(
        DivergedError, match=r"training diverged at iteration 1 .*policy_loss.*learning_rate"
    ):
        trainer.train()
    assert issubclass(DivergedError, PufferError)  # the CLI prints it as one line
    trainer.close()
    env.close()
