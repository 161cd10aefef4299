"""The clipped PPO loss over one minibatch, written like the equations of docs/architecture.md."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from puffer.kernels.loss import ppo_categorical_loss, ppo_categorical_loss_available
from puffer.train.policies.heads import ActionHead, CategoricalHead

__all__ = [
    "LossCoefs",
    "MinibatchNorms",
    "MinibatchRows",
    "annealed_beta",
    "cosine_lr",
    "fused_loss_applies",
    "importance_weights",
    "minibatch_loss",
    "minibatch_norms",
    "ppo_loss",
]


@dataclass(frozen=True)
class LossCoefs:
    """Coefficients of the loss: ratio clip, value clip, value weight, entropy weight."""

    clip: float
    vf_clip: float
    vf_coef: float
    ent_coef: float


@dataclass(frozen=True)
class MinibatchNorms:
    """What the loss divides by, taken over a whole minibatch: the advantage's mean and std over
    acting rows, and the counts of acting rows and of value-trained rows (each at least 1).
    A minibatch run in several passes gives every pass the same norms, so the passes' losses
    sum to the whole minibatch's loss."""

    adv_mean: Tensor
    adv_std: Tensor
    live: Tensor
    value_live: Tensor


@dataclass(frozen=True)
class MinibatchRows:
    """The stored rows one loss pass trains on, gathered once from the rollout buffer.

    Attributes:
        actions: (B, T, *action_shape) the actions taken (int64 or float32).
        action_masks: (B, T, P) bool legal-action masks, or None when the env has none.
        logprobs: (B, T) float32 log pi_old(a_t | o_t) stored at rollout.
        values: (B, T) float32 V(o_t) stored at rollout (the value clip's anchor).
        advantages: (B, T) float32 puff advantages, not yet normalized.
        weights: (B, 1) float32 importance weights of the sampled rows.
        masks: (B, T) float32, 1 for rows that acted, 0 for the others.
        value_masks: (B, T) float32, 1 for rows whose value is trained; None means `masks`.
    """

    actions: Tensor
    action_masks: Tensor | None
    logprobs: Tensor
    values: Tensor
    advantages: Tensor
    weights: Tensor
    masks: Tensor
    value_masks: Tensor | None = None

    @property
    def returns(self) -> Tensor:
        """(B, T) value targets: advantage + stored value."""
        return self.advantages + self.values


def minibatch_norms(
    mb_adv: Tensor, mb_mask: Tensor, mb_value_mask: Tensor | None = None
) -> MinibatchNorms:
    """The `MinibatchNorms` of a (B, T) minibatch; masks as in `ppo_loss`."""
    live = mb_mask.sum().clamp(min=1)
    value_mask = mb_mask if mb_value_mask is None else mb_value_mask
    adv_mean = (mb_adv * mb_mask).sum() / live
    adv_std = (((mb_adv - adv_mean).square() * mb_mask).sum() / live).sqrt()
    return MinibatchNorms(adv_mean, adv_std, live, value_mask.sum().clamp(min=1))


def importance_weights(probs: Tensor, idx: Tensor, beta: float | Tensor) -> Tensor:
    """(N p_i)^(-beta) for the sampled segments `idx`; `probs` (N,) sums to 1. Returns (B,)."""
    return (probs.shape[0] * probs[idx]).pow(-beta)


def annealed_beta(beta0: float, iteration: int, iterations: int) -> float:
    """beta linearly annealed from beta0 at iteration 0 to 1 at the last iteration."""
    return beta0 + (1.0 - beta0) * min(1.0, iteration / max(1, iterations - 1))


def cosine_lr(lr: float, iteration: int, iterations: int) -> float:
    """Cosine decay from lr at iteration 0 to 0 after the last iteration."""
    return lr * 0.5 * (1.0 + math.cos(math.pi * iteration / iterations))


def ppo_loss(
    new_logprob: Tensor,
    entropy: Tensor,
    new_value: Tensor,
    mb_logprob: Tensor,
    mb_value: Tensor,
    mb_adv: Tensor,
    mb_returns: Tensor,
    mb_weight: Tensor,
    mb_mask: Tensor,
    coefs: LossCoefs,
    mb_value_mask: Tensor | None = None,
    norms: MinibatchNorms | None = None,
) -> tuple[Tensor, dict[str, Tensor]]:
    """Clipped policy loss, clipped value loss and entropy bonus for one minibatch.

    Args:
        new_logprob, entropy, new_value: (B, T) from the current policy.
        mb_logprob, mb_value: (B, T) stored at rollout.
        mb_adv: (B, T) puff advantages; normalized here by `norms` (the minibatch's).
        mb_returns: (B, T) value targets (advantage + value).
        mb_weight: (B, 1) importance weights of the sampled segments.
        mb_mask: (B, T) 1 for rows that acted (live agent rows), 0 for the others.
        coefs: the loss coefficients.
        mb_value_mask: (B, T) 1 for rows whose value is trained; None means `mb_mask`. Turn-
            based games train the value of waiting rows too (see `PuffeRL.train`).
        norms: the whole minibatch's `minibatch_norms` when these rows are one pass of it;
            None takes them from these rows.

    Returns:
        (scalar loss, detached stats: policy, value, entropy, approx_kl, clipfrac, and the
        ratio (B, T) that the trainer writes back for V-trace).
    """
    if norms is None:
        norms = minibatch_norms(mb_adv, mb_mask, mb_value_mask)

    def mean(x: Tensor) -> Tensor:
        return (x * mb_mask).sum() / norms.live

    value_mask = mb_mask if mb_value_mask is None else mb_value_mask

    log_ratio = new_logprob - mb_logprob
    ratio = log_ratio.exp()
    adv = (mb_adv - norms.adv_mean) / (norms.adv_std + 1e-8)
    adv = mb_weight * adv
    pg_loss = mean(torch.max(-adv * ratio, -adv * ratio.clamp(1 - coefs.clip, 1 + coefs.clip)))
    v_clipped = mb_value + (new_value - mb_value).clamp(-coefs.vf_clip, coefs.vf_clip)
    v_error = torch.max((new_value - mb_returns).square(), (v_clipped - mb_returns).square())
    v_loss = 0.5 * (v_error * value_mask).sum() / norms.value_live
    entropy_loss = mean(entropy)
    loss = pg_loss + coefs.vf_coef * v_loss - coefs.ent_coef * entropy_loss
    with torch.no_grad():
        stats = {
            "policy_loss": pg_loss.detach(),
            "value_loss": v_loss.detach(),
            "entropy": entropy_loss.detach(),
            "approx_kl": mean((ratio - 1) - log_ratio),
            "clipfrac": mean(((ratio - 1).abs() > coefs.clip).float()),
            "ratio": ratio.detach(),
        }
    return loss, stats


# The fused loss keeps 2 floats per logit for backward (probabilities and log-probabilities);
# above this many logits a row, the graph runs instead (8,192 rows: 256 MiB kept at the limit).
_FUSED_MAX_LOGITS = 4096


def fused_loss_applies(head: ActionHead, probe: Tensor) -> bool:
    """Whether `minibatch_loss(fused=True)` serves this head: a `CategoricalHead` of at most 4,096 logits a
    row whose parameters (`probe`, one of them) are float32 on the CPU with the kernel built."""
    return (
        isinstance(head, CategoricalHead)
        and len(head.nvec) * max(head.nvec) <= _FUSED_MAX_LOGITS
        and ppo_categorical_loss_available(probe)
    )


def minibatch_loss(
    head: ActionHead,
    params: Tensor,
    new_value: Tensor,
    rows: MinibatchRows,
    coefs: LossCoefs,
    norms: MinibatchNorms | None = None,
    fused: bool = False,
) -> tuple[Tensor, dict[str, Tensor]]:
    """`ppo_loss` over `head.logprob_entropy(params, rows.actions, rows.action_masks)`, with
    returns `rows.returns`: the trainer's loss from the policy's head parameters.

    `fused` (where `fused_loss_applies`) runs it as one kernel pass each way
    (`puffer.kernels.ppo_categorical_loss`) instead of the graph's forty small operations: the
    same loss, stats and gradients to float rounding (`test_train_fused_loss.py`).

    Args:
        head: the policy's action head.
        params: (B, T, P) its parameters from the policy.
        new_value: (B, T) float32 V(o_t) from the current policy.
        rows: the minibatch's stored rows.
        coefs: the loss coefficients.
        norms: as in `ppo_loss`.
        fused: run the fused categorical kernel.
    """
    value_mask = rows.masks if rows.value_masks is None else rows.value_masks
    if not fused:
        new_logprob, entropy = head.logprob_entropy(params, rows.actions, rows.action_masks)
        return ppo_loss(
            new_logprob,
            entropy,
            new_value,
            mb_logprob=rows.logprobs,
            mb_value=rows.values,
            mb_adv=rows.advantages,
            mb_returns=rows.returns,
            mb_weight=rows.weights,
            mb_mask=rows.masks,
            coefs=coefs,
            mb_value_mask=rows.value_masks,
            norms=norms,
        )
    if norms is None:
        norms = minibatch_norms(rows.advantages, rows.masks, rows.value_masks)
    actions = rows.actions.long()
    loss, stats, ratio = ppo_categorical_loss(
        head.logit_grid(params, rows.action_masks),
        actions.unsqueeze(-1) if head.scalar else actions,
        new_value,
        rows.logprobs,
        rows.values,
        rows.advantages,
        rows.weights,
        rows.masks,
        value_mask,
        (norms.adv_mean, norms.adv_std, norms.live, norms.value_live),
        (coefs.clip, coefs.vf_clip, coefs.vf_coef, coefs.ent_coef),
    )
    names = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac")
    return loss, {**dict(zip(names, stats.unbind(), strict=True)), "ratio": ratio}
