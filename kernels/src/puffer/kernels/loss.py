"""The categorical PPO loss as one autograd function over a CPU kernel (``csrc/ppo_cpu.cpp``).

Its reference is the trainer's own code, ``puffer.train.ppo.ppo_loss`` over
``CategoricalHead.logprob_entropy``, and ``packages/puffer-train/tests/test_train_fused_loss.py`` holds
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

# Rows of work per OpenMP thread: below it one thread does the pass (forward 12 us and backward
# 5 us per 1,024 rows of 3 actions on a 2-core Xeon, so a 8,192-row pass stays on one).
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
    """The kernel pair as an autograd function, not a ``torch.library`` custom op: the op's
    dispatch took 240 us per forward and backward, this 130 us, against 135 us in the kernels
    (8,192 rows, 2-core Xeon)."""

    @staticmethod
    def forward(ctx, logits, actions, new_value, old_logprob, old_value, advantage, weight, mask,
                value_mask, horizon, scalars):  # fmt: skip
        rows, branches, width = logits.shape
        # Choice-major (K * W, rows): the kernel's own layout, read back only by its backward.
        probs = logits.new_empty(branches * width, rows)
        logp = torch.empty_like(probs)
        ratio = new_value.new_empty(rows)
        sums = torch.empty(5, dtype=torch.float64)
        _, _, live, value_live, _, _, vf_coef, ent_coef = scalars
        inputs = (logits, actions, new_value, old_logprob, old_value, advantage, weight, mask)
        _launch("forward", (*inputs, value_mask, probs, logp, ratio, sums), horizon, scalars)
        policy, value_error, entropy, kl, clipped = sums.tolist()
        terms = [policy / live, 0.5 * value_error / value_live, entropy / live]
        loss = terms[0] + vf_coef * terms[1] - ent_coef * terms[2]
        values = torch.tensor([*terms, kl / live, clipped / live, loss])
        loss, stats = values[5], values[:5]
        ctx.save_for_backward(*inputs, value_mask, ratio, probs, logp)
        ctx.horizon, ctx.scalars = horizon, scalars
        ctx.mark_non_differentiable(stats, ratio)
        return loss, stats, ratio

    @staticmethod
    def backward(ctx, grad_loss, _grad_stats, _grad_ratio):
        saved = ctx.saved_tensors  # the nine inputs, then ratio, probs, logp
        logits, new_value, (ratio, probs, logp) = saved[0], saved[2], saved[9:]
        _, _, live, value_live, _, _, vf_coef, ent_coef = ctx.scalars
        g = float(grad_loss)
        grad_logits, grad_value = torch.empty_like(logits), torch.empty_like(new_value)
        _launch(
            "backward",
            (*saved[:9], probs, logp, ratio, grad_logits, grad_value),
            ctx.horizon,
            ctx.scalars,
            # dL/d(each summed term): policy, value error, entropy.
            (g / live, g * vf_coef * 0.5 / value_live, -g * ent_coef / live),
        )
        return grad_logits, None, grad_value, *(None,) * 8


def _launch(
    direction: str,
    tensors: tuple[Tensor, ...],
    horizon: int,
    scalars: list[float],
    gradients: tuple[float, ...] = (),
) -> None:
    """Call the forward or backward kernel on `tensors` (logits first) in the C order."""
    rows, branches, width = tensors[0].shape
    adv_mean, adv_std, _, _, clip, vf_clip, _, _ = scalars
    kernel = getattr(_lib.library("cpu"), f"puffer_ppo_categorical_{direction}_cpu")
    kernel(
        *(t.data_ptr() for t in tensors),
        rows,
        horizon,
        branches,
        width,
        adv_mean,
        adv_std,
        clip,
        vf_clip,
        *gradients,
        _threads(rows),
    )


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
