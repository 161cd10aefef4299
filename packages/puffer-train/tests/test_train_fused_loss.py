"""The fused categorical PPO loss against its reference, `ppo_loss` over `head.logprob_entropy`."""

from __future__ import annotations

import tempfile

import pytest
import torch

from puffer.kernels import kernel_libraries
from puffer.train import Config, PuffeRL, TrainConfig, VecConfig, make_policy
from puffer.train.policies import CategoricalHead, GaussianHead
from puffer.train.ppo import (
    LossCoefs,
    MinibatchRows,
    fused_loss_applies,
    minibatch_loss,
    minibatch_norms,
    ppo_loss,
)
from puffer.train.run import make_vecenv

pytestmark = pytest.mark.skipif(
    kernel_libraries()["cpu"] is None, reason="the CPU kernel library was not built"
)

COEFS = LossCoefs(clip=0.2, vf_clip=0.2, vf_coef=2.0, ent_coef=0.01)


def _minibatch(nvec: list[int], scalar: bool, masked: bool, seed: int, batch=6, steps=5):
    """Random rollout rows: log-probs and values near the new ones, so some ratios and values
    fall inside their clip ranges and some outside; some rows dead, some actions illegal."""
    g = torch.Generator().manual_seed(seed)
    head = CategoricalHead(8, nvec, scalar=scalar)
    params = torch.randn(batch, steps, sum(nvec), generator=g) * 2
    action_masks = None
    if masked:
        action_masks = torch.rand(batch, steps, sum(nvec), generator=g) > 0.3
        start = 0
        for n in nvec:  # one legal choice per branch at least
            action_masks[..., start] = True
            start += n
    grid = head.logit_grid(params, action_masks)
    actions = torch.distributions.Categorical(logits=grid).sample()  # (B, T, K), legal
    stored = actions.squeeze(-1) if scalar else actions
    with torch.no_grad():
        logprob, _ = head.logprob_entropy(params, stored, action_masks)
    rows = dict(
        actions=stored,
        new_value=torch.randn(batch, steps, generator=g),
        mb_logprob=logprob + 0.3 * torch.randn(batch, steps, generator=g),
        mb_adv=torch.randn(batch, steps, generator=g) * 3,
        mb_weight=torch.rand(batch, 1, generator=g) + 0.5,
        mb_mask=(torch.rand(batch, steps, generator=g) > 0.2).float(),
    )
    rows["mb_value"] = rows["new_value"] + 0.3 * torch.randn(batch, steps, generator=g)
    value_mask = torch.ones(batch, steps) if masked else None
    return head, params, action_masks, rows, value_mask


def _gathered(rows: dict, action_masks, value_mask) -> MinibatchRows:
    return MinibatchRows(
        actions=rows["actions"],
        action_masks=action_masks,
        logprobs=rows["mb_logprob"],
        values=rows["mb_value"],
        advantages=rows["mb_adv"],
        weights=rows["mb_weight"],
        masks=rows["mb_mask"],
        value_masks=value_mask,
    )


def _both(head, params, action_masks, rows, value_mask, norms=None):
    """(loss, stats, gradients wrt params and new value) from the reference and the kernel."""
    out = []
    for fused in (False, True):
        p = params.clone().requires_grad_()
        v = rows["new_value"].clone().requires_grad_()
        if fused:
            gathered = _gathered(rows, action_masks, value_mask)
            loss, stats = minibatch_loss(head, p, v, gathered, COEFS, norms, fused=True)
        else:
            new_logprob, entropy = head.logprob_entropy(p, rows["actions"], action_masks)
            loss, stats = ppo_loss(
                new_logprob, entropy, v, rows["mb_logprob"], rows["mb_value"], rows["mb_adv"],
                rows["mb_adv"] + rows["mb_value"], rows["mb_weight"], rows["mb_mask"], COEFS,
                value_mask, norms,
            )  # fmt: skip
        grads = torch.autograd.grad(loss, (p, v))
        out.append((loss, stats, grads))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    ("nvec", "scalar", "masked"),
    [([3], True, False), ([5], True, True), ([2, 4, 3], False, False), ([3, 3], False, True)],
    ids=["discrete", "discrete-masked", "multidiscrete-padded", "multidiscrete-masked"],
)
def test_fused_loss_equals_reference(nvec, scalar, masked, seed):
    head, params, action_masks, rows, value_mask = _minibatch(nvec, scalar, masked, seed)
    (ref_loss, ref_stats, ref_grads), (loss, stats, grads) = _both(
        head, params, action_masks, rows, value_mask
    )
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=1e-6)
    assert stats.keys() == ref_stats.keys()
    for key in ref_stats:
        torch.testing.assert_close(stats[key], ref_stats[key], rtol=1e-5, atol=1e-6)
    for got, expected in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-7)
    # The inputs reached both sides of every clip: the test covers each branch of the max.
    ratio = ref_stats["ratio"]
    assert ((ratio - 1).abs() > COEFS.clip).any() and ((ratio - 1).abs() < COEFS.clip).any()


@pytest.mark.parametrize("masked", [False, True])
def test_minibatch_loss_is_ppo_loss_over_the_gathered_rows(masked):
    """Unfused, `minibatch_loss` is `ppo_loss` over the head's log-probs, each field of
    `MinibatchRows` in its place and returns = advantages + values: bit for bit."""
    head, params, action_masks, rows, value_mask = _minibatch([3, 3], False, masked, seed=6)
    gathered = _gathered(rows, action_masks, value_mask)
    loss, stats = minibatch_loss(head, params, rows["new_value"], gathered, COEFS)
    new_logprob, entropy = head.logprob_entropy(params, rows["actions"], action_masks)
    ref_loss, ref_stats = ppo_loss(
        new_logprob, entropy, rows["new_value"], rows["mb_logprob"], rows["mb_value"],
        rows["mb_adv"], rows["mb_adv"] + rows["mb_value"], rows["mb_weight"], rows["mb_mask"],
        COEFS, value_mask,
    )  # fmt: skip
    torch.testing.assert_close(loss, ref_loss, rtol=0, atol=0)
    for key in ref_stats:
        torch.testing.assert_close(stats[key], ref_stats[key], rtol=0, atol=0)


def test_fused_loss_with_a_whole_minibatch_s_norms():
    """A pass of a larger minibatch divides by the minibatch's norms, not its own."""
    head, params, action_masks, rows, value_mask = _minibatch([3], True, False, seed=4)
    norms = minibatch_norms(rows["mb_adv"] * 2 + 1, torch.ones(6, 5))
    (ref_loss, _, ref_grads), (loss, _, grads) = _both(
        head, params, action_masks, rows, value_mask, norms
    )
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=1e-6)
    for got, expected in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-7)


def test_fused_loss_ties_split_the_gradient_like_torch():
    """Ratio exactly 1 and value exactly the old one: both operands of each max are equal,
    where torch splits the gradient between them."""
    head, params, action_masks, rows, value_mask = _minibatch([3], True, False, seed=5)
    with torch.no_grad():
        rows["mb_logprob"], _ = head.logprob_entropy(params, rows["actions"])
    rows["mb_value"] = rows["new_value"].clone()
    (ref_loss, _, ref_grads), (loss, _, grads) = _both(head, params, action_masks, rows, value_mask)
    torch.testing.assert_close(loss, ref_loss, rtol=1e-5, atol=1e-6)
    for got, expected in zip(grads, ref_grads, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-7)


def test_fused_loss_applies_to_float32_categorical_heads_on_cpu():
    head = CategoricalHead(8, [3], scalar=True)
    assert fused_loss_applies(head, head.linear.weight)
    assert not fused_loss_applies(head, head.linear.weight.double())
    assert not fused_loss_applies(GaussianHead(8, 2), head.linear.weight)
    assert not fused_loss_applies(CategoricalHead(8, [4097], scalar=True), head.linear.weight)


def test_trainer_with_and_without_the_fused_loss_agrees():
    """Two iterations of Ocean breakout from the same seed, Adam (Muon's bfloat16 would round the
    last-bit differences up): the same losses and parameters to float rounding."""
    results = []
    for fused in (False, True):
        config = Config(
            train=TrainConfig(
                horizon=16,
                minibatch_size=256,
                optimizer="adam",
                total_timesteps=10**6,
                seed=0,
                data_dir=tempfile.mkdtemp(),
            ),
            vec=VecConfig(backend="native", num_instances=1),
            env={"num_envs": 32},
        )
        env = make_vecenv("breakout", config)
        torch.manual_seed(0)
        trainer = PuffeRL(config, env, make_policy(config.policy, env))
        assert trainer.update.fused_loss
        trainer.update.fused_loss = fused
        for _ in range(2):
            trainer.collect()
            losses = trainer.train()
        results.append((losses, [p.detach().clone() for p in trainer.policy.parameters()]))
        trainer.close()
        env.close()
    (ref_losses, ref_params), (losses, params) = results
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
        assert losses[key] == pytest.approx(ref_losses[key], rel=1e-4, abs=1e-6)
    for got, expected in zip(params, ref_params, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
