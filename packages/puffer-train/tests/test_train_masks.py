"""Legal-action masks in the policy heads, the rollout and the trainer."""

from __future__ import annotations

import functools

import numpy as np
import pettingzoo
import pytest
import torch

from puffer.core import APIUsageError, PufferEnv, emulate_pettingzoo
from puffer.train import PolicyConfig, PuffeRL, TrainConfig, make_policy
from puffer.train.policies.heads import CategoricalHead
from puffer.train.ppo import LossCoefs, ppo_loss
from puffer.train.testing import count_illegal_samples
from puffer.vector import make as make_vec


def test_masked_head_never_samples_illegal_and_renormalizes() -> None:
    torch.manual_seed(0)
    head = CategoricalHead(4, [5], scalar=True)
    params = torch.randn(64, 5) * 3
    mask = torch.rand(64, 5) < 0.5
    mask[:, 2] = True
    action, logprob = head.sample(params, mask)
    _, entropy = head.logprob_entropy(params, action, mask)
    assert mask[torch.arange(64), action].all()
    # The reference: a categorical over the legal logits only.
    for row in range(64):
        legal = params[row][mask[row]]
        ref = torch.distributions.Categorical(logits=legal)
        index = int(mask[row, : action[row]].sum())
        assert torch.isclose(logprob[row], ref.log_prob(torch.tensor(index)), atol=1e-5)
        assert torch.isclose(entropy[row], ref.entropy(), atol=1e-5)
    torch.testing.assert_close(head.logprob_entropy(params, action, mask)[0], logprob)
    params.requires_grad_(True)
    head.logprob_entropy(params, action, mask)[0].sum().backward()
    assert torch.isfinite(params.grad).all() and (params.grad[~mask] == 0).all()


def test_masked_multidiscrete_branches_are_masked_separately() -> None:
    torch.manual_seed(1)
    head = CategoricalHead(4, [3, 5])
    params = torch.randn(256, 8)
    mask = torch.zeros(256, 8, dtype=torch.bool)
    mask[:, 1] = True  # branch 0: only choice 1
    mask[:, 3 + 4] = True  # branch 1: only choice 4
    action, logprob = head.sample(params, mask)
    _, entropy = head.logprob_entropy(params, action, mask)
    assert (action[:, 0] == 1).all() and (action[:, 1] == 4).all()
    torch.testing.assert_close(logprob, torch.zeros(256), atol=1e-6, rtol=0)
    torch.testing.assert_close(entropy, torch.zeros(256), atol=1e-6, rtol=0)


def test_unmasked_path_is_unchanged_without_masks() -> None:
    head = CategoricalHead(4, [6], scalar=True)
    params = torch.randn(10, 6)
    action = torch.randint(0, 6, (10,))
    torch.testing.assert_close(
        head.logprob_entropy(params, action, None),
        head.logprob_entropy(params, action, torch.ones(10, 6) > 0),
    )


def _classic(env_id: str, **kwargs):
    return functools.partial(pettingzoo.make, "aec", f"classic/{env_id}", **kwargs)


def _game(env_id: str, **kwargs):
    creator = _classic(env_id, **kwargs)

    def make(buf=None):
        return emulate_pettingzoo(creator, buf=buf)

    return make


# (positions, draws): 20k samples on go, 5k on chess (4,672 actions: sampling dominates);
# benchmarks/masks.py draws 1M on each.
SAMPLES = {"chess-v6": (20, 250), "go-v5": (40, 500)}


@pytest.mark.parametrize(
    ("env_id", "kwargs"), [("chess-v6", {}), ("go-v5", {"board_size": 9})], ids=["chess", "go"]
)
def test_masked_policy_samples_no_illegal_action_and_unmasked_does(env_id, kwargs) -> None:
    vec = make_vec(_game(env_id, **kwargs), 1, backend="serial")
    positions, draws = SAMPLES[env_id]
    try:
        illegal, total = count_illegal_samples(vec, positions, draws)
        assert total == positions * draws and illegal == 0
        # The same policy without the mask path plays illegal moves.
        illegal, total = count_illegal_samples(vec, positions, draws, masked=False)
        assert illegal > 0
    finally:
        vec.close()


class StuckEnv(PufferEnv):
    """Two rows; row 1 acts on the second step with every action masked illegal."""

    writes_action_masks = True

    def __init__(self, buf=None):
        from gymnasium import spaces

        self.single_observation_space = spaces.Box(0, 1, (3,), np.float32)
        self.single_action_space = spaces.Discrete(3)
        self.num_agents = 2
        super().__init__(buf)
        self.t = 0

    def _reset(self, seed):
        self.action_masks[:] = True
        return []

    def _step(self):
        self.t += 1
        self.action_masks[1] = self.t < 2
        self.masks[:] = [True, self.t < 2 or self.t == 2]
        return []


def test_all_illegal_acting_row_is_a_clear_error() -> None:
    env = StuckEnv()
    config = TrainConfig(horizon=4, minibatch_size=8, total_timesteps=8, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
    with pytest.raises(APIUsageError, match=r"env .*StuckEnv.*agent row 1 must act"):
        trainer.collect()


def test_trainer_stores_masks_and_trains_on_a_turn_based_game() -> None:
    vec = make_vec(_game("tictactoe-v3"), 4, backend="serial")
    config = TrainConfig(horizon=8, minibatch_size=32, total_timesteps=64, device="cpu", seed=1)
    trainer = PuffeRL(config, vec, make_policy(PolicyConfig(hidden_size=16), vec))
    trainer.collect()
    buf = trainer.buffer
    assert buf.action_masks is not None and buf.action_masks.shape == (9, 8, 9)
    acting = buf.masks[:8] > 0
    chosen = buf.action_masks[:8].gather(-1, buf.actions[:8].unsqueeze(-1)).squeeze(-1)
    assert chosen[acting].all()  # every stored action of an acting row was legal
    losses = trainer.train()
    assert np.isfinite(losses["policy_loss"]) and np.isfinite(losses["entropy"])
    vec.close()


def test_mask_path_is_off_for_envs_without_masks() -> None:
    from puffer.core import make

    env = make("gym-CartPole-v1")
    config = TrainConfig(horizon=8, minibatch_size=8, total_timesteps=16, device="cpu")
    trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=8), env))
    assert not trainer.rollout.masked and trainer.buffer.action_masks is None
    env.close()


def test_action_masks_false_trains_connect4_on_every_action_as_pufferlib3() -> None:
    # connect4 provides masks; with train.action_masks = false the trainer ignores them and the
    # env's own rule judges an illegal move (a full column loses), as PufferLib 3.0's trainer.
    from puffer.core import make

    def illegal_rows(action_masks: bool) -> tuple[PuffeRL, int]:
        env = make("connect4", num_envs=64)
        config = TrainConfig(
            horizon=32, minibatch_size=512, total_timesteps=4096, device="cpu", seed=3,
            action_masks=action_masks,
        )  # fmt: skip
        trainer = PuffeRL(config, env, make_policy(PolicyConfig(hidden_size=16), env))
        trainer.collect()
        # A column whose top cell is filled in the stored observation is illegal there.
        obs = trainer.buffer.observations.reshape(-1, 7, 6)
        full = obs[..., 5] != 0
        chosen = full.gather(-1, trainer.buffer.actions.reshape(-1, 1).long())
        assert np.isfinite(trainer.train()["policy_loss"])
        env.close()
        return trainer, int(chosen.sum())

    masked, illegal_masked = illegal_rows(True)
    assert masked.rollout.masked and masked.buffer.action_masks is not None
    assert illegal_masked == 0
    unmasked, illegal_unmasked = illegal_rows(False)
    assert not unmasked.rollout.masked and unmasked.buffer.action_masks is None
    assert illegal_unmasked > 0


def test_value_mask_trains_waiting_rows_value_but_not_their_policy() -> None:
    # Row 0 acted, row 1 waited for its turn: with a value mask of ones, the waiting row's
    # value gets a gradient toward its return, while its policy and entropy get none.
    coefs = LossCoefs(clip=0.2, vf_clip=10.0, vf_coef=0.5, ent_coef=0.01)
    acted = torch.tensor([[1.0], [0.0]])
    new_logprob = torch.zeros(2, 1, requires_grad=True)
    entropy = torch.ones(2, 1, requires_grad=True)
    new_value = torch.zeros(2, 1, requires_grad=True)
    old = torch.zeros(2, 1)
    advantages, returns = torch.tensor([[1.0], [1.0]]), torch.tensor([[1.0], [-1.0]])
    args = (new_logprob, entropy, new_value, old, old, advantages, returns, torch.ones(2, 1))
    for value_mask, waiting_value_trained in ((None, False), (torch.ones(2, 1), True)):
        for tensor in (new_logprob, entropy, new_value):
            tensor.grad = None
        loss, _ = ppo_loss(*args, acted, coefs, value_mask)
        loss.backward()
        assert new_logprob.grad[1, 0] == 0 and entropy.grad[1, 0] == 0
        assert (new_value.grad[1, 0] > 0) == waiting_value_trained  # pushed toward -1
        assert new_value.grad[0, 0] < 0  # the acting row's value goes toward +1 either way
