"""The minibatch update from one CUDA graph (`train.update_graph`): off with its reason on
the CPU, where its body runs eagerly and equals `Update`'s own loop; on a GPU it captures for
PufferNet and trains, and one replayed iteration equals the eager one."""

from __future__ import annotations

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.update_graph import GraphedUpdate

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

PUFFERNET = PolicyConfig(network="puffernet", recurrent="mingru", hidden_size=16, mingru_layers=2)


def _trainer(
    device: str = "cpu",
    policy: PolicyConfig = PUFFERNET,
    minibatch_size: int = 64,
    update_graph: bool = True,
    **train: object,
) -> PuffeRL:
    torch.manual_seed(0)
    env = make("squared", num_envs=32)
    config = TrainConfig(
        horizon=8, minibatch_size=minibatch_size, total_timesteps=2048, device=device,
        seed=0, update_graph=update_graph, **train,
    )  # fmt: skip
    return PuffeRL(config, env, make_policy(policy, env))


def _close(trainer: PuffeRL) -> None:
    trainer.close()
    trainer.vecenv.close()


def test_cpu_runs_the_eager_update_and_says_why() -> None:
    trainer = _trainer()
    assert trainer.update.graph_status == (
        "eager update: CUDA graphs need a CUDA device, the policy is on cpu"
    )
    trainer.collect()
    trainer.train()
    assert trainer.update.graphed is None
    graph, reason = GraphedUpdate.create(trainer.update, ["policy_loss"])
    assert graph is None and reason == trainer.update.graph_status
    _close(trainer)
    off = PuffeRL(
        TrainConfig(horizon=8, minibatch_size=64, total_timesteps=512, device="cpu"),
        env := make("squared", num_envs=8),
        make_policy(PUFFERNET, env),
    )
    assert off.update.graph_status == "off (update_graph=False)"
    _close(off)


@pytest.mark.parametrize("optimizer", ["muon", "adam"])
def test_the_graph_body_run_eagerly_equals_the_update_loop(optimizer: str) -> None:
    # Two trainers from the same seeds: one trains its second iteration by Update's loop, the
    # other by GraphedUpdate's body (tensor learning rate and beta), eagerly on the CPU.
    loop, body = _trainer(optimizer=optimizer), _trainer(optimizer=optimizer)
    for trainer in (loop, body):
        torch.manual_seed(1)
        trainer.collect()
        trainer.train()
    keys = ["policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "grad_norm"]
    graphed = GraphedUpdate(body.update, keys, capture=False)
    for trainer in (loop, body):
        torch.manual_seed(2)
        trainer.collect()
    torch.testing.assert_close(loop.buffer.observations, body.buffer.observations)
    torch.manual_seed(3)
    want = loop.train()
    torch.manual_seed(3)
    beta = body.update.schedule(body.iteration)
    got = body.update.iteration_losses(*graphed(beta), beta)
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), key
    # Each side took 2 x 4 minibatch steps; the tensor learning rate rounds its product apart
    # from the number's fused multiply-add, so the parameters agree to float rounding.
    torch.testing.assert_close(body.optimizer.flat.data, loop.optimizer.flat.data)
    untrained = _trainer(optimizer=optimizer)
    assert not torch.equal(body.optimizer.flat.data, untrained.optimizer.flat.data)
    _close(untrained)
    # The learning rate is a number again for checkpoints and logs.
    assert isinstance(body.optimizer.param_groups[0]["lr"], float)
    _close(loop)
    _close(body)


@needs_gpu
@pytest.mark.parametrize("recurrent", ["mingru", "none"])
def test_trainer_captures_the_update_and_trains_on_cuda(recurrent: str) -> None:
    policy = PUFFERNET if recurrent == "mingru" else PolicyConfig(hidden_size=16, recurrent="none")
    trainer = _trainer("cuda", policy)
    for _ in range(3):
        trainer.collect()
        losses = trainer.train()
    assert trainer.update.graph_status == "captured"
    assert all(torch.isfinite(torch.tensor(v)) for v in losses.values())
    _close(trainer)


@needs_gpu
def test_a_replayed_iteration_equals_the_eager_one_on_cuda() -> None:
    # One minibatch of the whole batch: sampling without replacement takes every row, so the
    # graph's draws (its own generator offsets) and the eager loop's differ only in order.
    loop, graphed = (_trainer("cuda", minibatch_size=256, update_graph=g) for g in (False, True))
    for _ in range(2):
        for trainer in (loop, graphed):
            torch.manual_seed(3)
            trainer.collect()
        want, got = loop.train(), graphed.train()
    assert graphed.update.graph_status == "captured"
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-3, abs=1e-5), key
    torch.testing.assert_close(
        graphed.optimizer.flat.data, loop.optimizer.flat.data, rtol=1e-4, atol=1e-5
    )
    _close(loop)
    _close(graphed)
