"""The rollout forward from a CUDA graph: off with its reason on CPU; on a GPU the replayed
forward equals the eager one and follows the optimizer's in-place updates."""

from __future__ import annotations

import pytest
import torch

from puffer.core import make
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.graphs import GraphedForward

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


def _trainer(device: str, recurrent: str, cuda_graphs: bool = True) -> tuple[PuffeRL, object]:
    env = make("squared", num_envs=16)
    config = TrainConfig(
        horizon=8, minibatch_size=32, total_timesteps=512, device=device, cuda_graphs=cuda_graphs
    )
    policy = make_policy(PolicyConfig(hidden_size=16, recurrent=recurrent), env)
    return PuffeRL(config, env, policy), env


def test_cpu_runs_the_eager_forward_and_says_why() -> None:
    trainer, env = _trainer("cpu", "lstm")
    trainer.collect()
    assert trainer.rollout.graph_status == (
        "eager forward: CUDA graphs need a CUDA device, the policy is on cpu"
    )
    graph, reason = GraphedForward.create(trainer.policy, torch.zeros(16, 2), ())
    assert graph is None and reason == trainer.rollout.graph_status
    trainer.close()
    env.close()
    off, env = _trainer("cpu", "none", cuda_graphs=False)
    assert off.rollout.graph_status == "off (cuda_graphs=False)"
    env.close()


@needs_gpu
@pytest.mark.parametrize("recurrent", ["none", "lstm", "mingru"])
def test_graph_replay_equals_eager_forward(recurrent: str) -> None:
    torch.manual_seed(0)
    env = make("squared", num_envs=16)
    policy = make_policy(PolicyConfig(hidden_size=16, recurrent=recurrent), env).cuda()
    obs = torch.randn(16, *env.single_observation_space.shape, device="cuda")
    state = tuple(torch.randn_like(s) for s in policy.initial_state(16, "cuda"))
    graph, reason = GraphedForward.create(policy, obs, state)
    assert graph is not None, reason
    for _ in range(2):  # the second round after an in-place weight update
        obs, state = torch.randn_like(obs), tuple(torch.randn_like(s) for s in state)
        with torch.no_grad():
            got, want = graph(obs, state), policy.forward_eval(obs, state)
            torch.testing.assert_close(got[0], want[0])
            torch.testing.assert_close(got[1], want[1])
            for a, b in zip(got[2], want[2], strict=True):
                torch.testing.assert_close(a, b)
            for param in policy.parameters():
                param.mul_(0.9)
    env.close()


@needs_gpu
def test_trainer_captures_and_trains_on_cuda() -> None:
    trainer, env = _trainer("cuda", "lstm")
    for _ in range(2):
        trainer.collect()
        losses = trainer.train()
    assert trainer.rollout.graph_status == "captured"
    assert all(torch.isfinite(torch.tensor(v)) for v in losses.values())
    trainer.close()
    env.close()
