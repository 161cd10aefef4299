"""Sampling of a categorical policy in one CPU kernel pass (``csrc/ppo_cpu.cpp``).

The rollout samples every agent's action on every step. In torch that is about ten small
operations on an (N, K, W) grid (log-softmax, a uniform draw per choice, the Gumbel race, argmax,
gather, sum), each a pass over memory and a dispatch: 90 us for 1,024 rows of 3 actions on a
2-core Xeon, and about twice that in the rollout, where each operation starts with cold caches.
The kernel draws by inverse CDF instead, so it takes one uniform per (row, branch), drawn with
torch's generator (seeded runs stay reproducible), and does the rest in one pass.
``categorical_sample_reference`` is the same computation in torch, which the tests hold it to.
"""

from __future__ import annotations

import torch
from torch import Tensor

from puffer.kernels import _lib

__all__ = [
    "categorical_sample",
    "categorical_sample_available",
    "categorical_sample_reference",
]

# Logits per row the kernel's scratch block holds (kSampleScratch in ppo_cpu.cpp).
_MAX_LOGITS = 4096
# (row, branch) pairs per OpenMP thread: below it one thread does the pass.
_GRAIN = 1 << 14


def categorical_sample_available(logits: Tensor) -> bool:
    """Whether `categorical_sample` has a kernel for these (..., K, W) logits: float32 on the CPU,
    at most 4,096 logits a row, the CPU library built."""
    return (
        logits.device.type == "cpu"
        and logits.dtype == torch.float32
        and logits.shape[-1] * logits.shape[-2] <= _MAX_LOGITS
        and _lib.library("cpu") is not None
    )


def categorical_sample(logits: Tensor, uniforms: Tensor) -> tuple[Tensor, Tensor]:
    """Draw one choice per branch from softmax(logits) by inverse CDF.

    Args:
        logits: (..., K, W) float32 on the CPU: K branches of W logits each (padding and
            illegal choices at a large negative value, so their probability is 0).
        uniforms: (..., K) float32 in [0, 1), one per branch (`torch.rand`).

    Returns:
        (actions (..., K) int64: in each branch the first choice k whose running sum of
        probabilities exceeds the uniform; logprob (...,) float32: the sum over branches of
        log softmax at the chosen action). NaN logits give a NaN log-probability and an action
        still in range.

    Raises:
        ValueError: when `categorical_sample_available(logits)` is False or the shapes differ.

    Example:
        >>> logits = torch.tensor([[[0.0, -1e9, 2.0]]])  # one row, one branch, choice 1 illegal
        >>> actions, logprob = categorical_sample(logits, torch.tensor([[0.5]]))
        >>> actions.tolist(), round(logprob.item(), 4)
        ([[2]], -0.1269)
    """
    if not categorical_sample_available(logits):
        raise ValueError(
            f"categorical_sample: no kernel for {logits.dtype} logits of shape "
            f"{tuple(logits.shape)} on {logits.device}; use categorical_sample_reference"
        )
    *lead, branches, width = logits.shape
    if tuple(uniforms.shape) != (*lead, branches) or uniforms.dtype != torch.float32:
        raise ValueError(
            f"categorical_sample: uniforms are {uniforms.dtype} of shape "
            f"{tuple(uniforms.shape)}, expected float32 of shape {(*lead, branches)}"
        )
    # Rows may sit apart (the policy's head logits are a slice of a wider product's output):
    # the kernel takes the row stride, so only a layout it cannot read is copied.
    flat = logits.reshape(-1, branches * width)
    if flat.stride(-1) != 1:
        flat = flat.contiguous()
    rows = flat.shape[0]
    uniforms = uniforms.contiguous()
    actions = torch.empty((*lead, branches), dtype=torch.int64)
    logprob = torch.empty(lead, dtype=torch.float32)
    threads = max(1, min(torch.get_num_threads(), rows * branches // _GRAIN))
    _lib.library("cpu").puffer_categorical_sample_cpu(
        flat.data_ptr(),
        uniforms.data_ptr(),
        actions.data_ptr(),
        logprob.data_ptr(),
        rows,
        flat.stride(0) if rows > 1 else branches * width,
        branches,
        width,
        threads,
    )
    return actions, logprob


def categorical_sample_reference(logits: Tensor, uniforms: Tensor) -> tuple[Tensor, Tensor]:
    """`categorical_sample` in torch (any device and float dtype): the tests' reference."""
    top = logits.amax(-1, keepdim=True)
    weights = (logits - top).exp()
    total = weights.sum(-1, keepdim=True)
    passed = weights.cumsum(-1) > uniforms.unsqueeze(-1) * total
    width = logits.shape[-1]
    index = torch.arange(width, device=logits.device)
    # The first choice past the uniform, else the last of nonzero weight (rounding at u ~ 1).
    first = torch.where(passed, index, width).amin(-1)
    last = torch.where(weights > 0, index, 0).amax(-1)
    actions = torch.where(first < width, first, last)
    logp = logits - top - total.log()
    return actions, logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1).sum(-1)
