"""The categorical PPO loss as one autograd function over a CPU kernel (``csrc/ppo_cpu.cpp``).

Its reference is the trainer's own code, ``puffer.train.ppo.ppo_loss`` over
``CategoricalHead.evaluate``, and ``packages/puffer-train/tests/test_train_fused_loss.py`` holds
them equal, values and gradients. That graph is some forty small operations on (B, T) tensors,
each a pass over memory and an autograd node. The kernel is float32 and CPU only; CUDA keeps the
torch graph, where the GPU runs the elementwise work. Forward keeps each row's probabilities
and log-probabilities for backward: 2 x B x T x K x W floats.
"""

from __future__ import annotations

import torch
from torch import Tensor

from puffer.kernels import _lib

__all__ = ["ppo_categorical_loss", "ppo_categorical_loss_available"]

# Rows of work per OpenMP thread: below it one thread does the pass (~30 us per 1,024 rows).
_GRAIN = 1 << 14


def ppo_categorical_loss_available(logits: Tensor) -> bool:
    """Whether `ppo_categorical_loss` has a kernel for these logits: float32 on the CPU with the
    CPU library built."""
    return (
        logits.device.type == "cpu"
        and logits.dtype == torch.float32
        and _lib.library("cpu") is not None
    )


class _Loss(torch.autograd.Function):
    """The kernel pair as an autograd function: a ``torch.library`` custom op cost 240 us more
    per forward and backward in its dispatch (2-core Xeon), more than the kernels themselves."""

    @staticmethod
    def forward(ctx, logits, actions, new_value, old_logprob, old_value, advantage, weight, mask,
                value_mask, horizon, scalars):  # fmt: skip
        rows, branches, width = logits.shape
        # Choice-major (K * W, rows): the kernel's own layout, read back only by its backward.
        probs = logits.new_empty(branches * width, rows)
        logp = torch.empty_like(probs)
        ratio = new_value.new_empty(rows)
        sums = torch.empty(5, dtype=torch.float64)
        adv_mean, adv_std, live, value_live, clip, vf_clip, vf_coef, ent_coef = scalars
        inputs = (logits, actions, new_value, old_logprob, old_value, advantage, weight, mask)
        _lib.library("cpu").puffer_ppo_categorical_forward_cpu(  # type: ignore[union-attr]
            *(t.data_ptr() for t in (*inputs, value_mask, probs, logp, ratio, sums)),
            rows,
            horizon,
            branches,
            width,
            adv_mean,
            adv_std,
            clip,
            vf_clip,
            _threads(rows),
        )
        policy, value_error, entropy, kl, clipped = sums.tolist()
        stats = [policy / live, 0.5 * value_error / value_live, entropy / live, kl / live]
        stats = torch.tensor([*stats, clipped / live])
        loss = stats[0] + vf_coef * stats[1] - ent_coef * stats[2]
        ctx.save_for_backward(*inputs, value_mask, ratio, probs, logp)
        ctx.horizon, ctx.scalars = horizon, scalars
        ctx.mark_non_differentiable(stats, ratio)
        return loss, stats, ratio

    @staticmethod
    def backward(ctx, grad_loss, _grad_stats, _grad_ratio):
        saved = ctx.saved_tensors  # the nine inputs, then ratio, probs, logp
        logits, new_value, (ratio, probs, logp) = saved[0], saved[2], saved[9:]
        rows, branches, width = logits.shape
        adv_mean, adv_std, live, value_live, clip, vf_clip, vf_coef, ent_coef = ctx.scalars
        g = float(grad_loss)
        grad_logits, grad_value = torch.empty_like(logits), torch.empty_like(new_value)
        _lib.library("cpu").puffer_ppo_categorical_backward_cpu(  # type: ignore[union-attr]
            *(t.data_ptr() for t in (*saved[:9], probs, logp, ratio, grad_logits, grad_value)),
            rows,
            ctx.horizon,
            branches,
            width,
            adv_mean,
            adv_std,
            clip,
            vf_clip,
            g / live,
            g * vf_coef * 0.5 / value_live,
            -g * ent_coef / live,
            _threads(rows),
        )
        return grad_logits, None, grad_value, *(None,) * 8


def _threads(rows: int) -> int:
    return max(1, min(torch.get_num_threads(), rows // _GRAIN))


def ppo_categorical_loss(
    logits: Tensor,
    actions: Tensor,
    new_value: Tensor,
    old_logprob: Tensor,
    old_value: Tensor,
    advantage: Tensor,
    weight: Tensor,
    mask: Tensor,
    value_mask: Tensor,
    norms: tuple[float, float, float, float],
    coefs: tuple[float, float, float, float],
) -> tuple[Tensor, Tensor, Tensor]:
    """The clipped PPO loss of a categorical policy over (B, T) rows, in one kernel pass.

    Args:
        logits: (B, T, K, W) float32 logits of K branches of W choices (padding and illegal
            choices at a large negative value), as ``CategoricalHead.logit_grid`` lays them out.
        actions: (B, T, K) int64 chosen indices.
        new_value: (B, T) the current value; old_logprob, old_value: (B, T) from the rollout;
        advantage: (B, T) puff advantages (returns are advantage + old value).
        weight: (B,) or (B, 1) importance weights of the segments.
        mask, value_mask: (B, T) float 0/1: rows that acted, rows whose value is trained.
        norms: (advantage mean, advantage std, acting rows, value rows) of the whole minibatch.
        coefs: (clip, vf_clip, vf_coef, ent_coef).

    Returns:
        (loss, a 0-dim tensor differentiable in ``logits`` and ``new_value``; stats (5,):
        policy loss, value loss, entropy, approx KL, clip fraction; ratio (B, T)).
    """
    batch, horizon, branches, width = logits.shape
    rows = batch * horizon
    flat = [
        t.reshape(rows).contiguous().float()
        for t in (old_logprob, old_value, advantage, mask, value_mask)
    ]
    loss, stats, ratio = _Loss.apply(
        logits.reshape(rows, branches, width).contiguous(),
        actions.reshape(rows, branches).contiguous().long(),
        new_value.reshape(rows).contiguous(),
        flat[0],
        flat[1],
        flat[2],
        weight.reshape(batch).contiguous().float(),
        flat[3],
        flat[4],
        horizon,
        [float(x) for x in (*norms, *coefs)],
    )
    return loss, stats, ratio.view(batch, horizon)
