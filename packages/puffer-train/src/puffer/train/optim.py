"""Optimizers: Muon on every parameter, as PufferLib 3.0 runs it, or Adam.

`train.optimizer = "muon"` is the update PufferLib 3.0's tuned configs were found with
(heavyball 2.2.1's `ForeachMuon`, which its trainer builds over all parameters): a Nesterov
average of the gradient, orthogonalized for matrices, taken at the learning rate as it is.
Until the learning-parity work our Muon followed `torch.optim.Muon` for hidden matrices and
AdamW for the rest, with steps rescaled to AdamW's size (`match_rms_adamw`); at PufferLib's
breakout config that trainer collapsed after 14M steps where PufferLib's went on to 450
(docs/results/train.md, "Parity with PufferLib 3.0").
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from puffer.core import APIUsageError
from puffer.train.config import TrainConfig
from puffer.train.config.sections import MUON_MOMENTUM_RULES

__all__ = ["NS_SCHEDULE", "PufferMuon", "make_optimizer", "newton_schulz"]

# heavyball's Newton-Schulz iteration: five steps of X <- a X + (b A + c A^2) X with A = X X^T,
# each step its own quintic (a, b, c), which drive the singular values towards 1 faster than
# one fixed quintic.
NS_SCHEDULE = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)

# Matrices up to this many elements share one zero-padded batch: at these sizes a product's
# per-call cost outweighs its arithmetic. Larger ones batch only with matrices of their own shape,
# where padding would add arithmetic.
_SMALL = 1 << 16


def newton_schulz(
    matrices: list[Tensor],
    schedule: tuple[tuple[float, float, float], ...] = NS_SCHEDULE,
    eps: float = 1e-7,
) -> list[Tensor]:
    """Orthogonalize 2-D matrices (U S V^T -> about U V^T), batched.

    Each matrix is oriented wide (transposed when it has more rows than columns) and divided by
    its Frobenius norm (at least `eps`), then iterated by `schedule` in float32, or in float64
    for float64 matrices (to tell an implementation's difference from float32 rounding, which
    the iteration magnifies in a matrix's near-null directions). Zero rows and
    columns stay zero through the iteration (X X^T gains zero rows and columns, so the product
    keeps them zero), so small matrices of different shapes share one zero-padded
    (k, rows, cols) batch, and larger ones of one shape another: each step's products run once
    per batch instead of once per matrix.

    Returns:
        one matrix per input, of the input's shape, float32 (float64 for float64 input).
    """
    wide = [m.T if m.size(0) > m.size(1) else m for m in matrices]
    result: list[Tensor | None] = [None] * len(matrices)
    for batch in _padding_batches(wide):
        rows = max(wide[i].size(0) for i in batch)
        cols = max(wide[i].size(1) for i in batch)
        dtype = torch.float32
        if all(wide[i].dtype == torch.float64 for i in batch):
            dtype = torch.float64
        x = wide[batch[0]].new_zeros((len(batch), rows, cols), dtype=dtype)
        for k, i in enumerate(batch):
            x[k, : wide[i].size(0), : wide[i].size(1)] = wide[i]
        x.div_(x.norm(dim=(1, 2), keepdim=True).clamp(min=eps))
        for a, b, c in schedule:
            gram = torch.bmm(x, x.transpose(1, 2))
            update = torch.baddbmm(gram, gram, gram, beta=b, alpha=c)
            x = torch.baddbmm(x, update, x, beta=a)
        for k, i in enumerate(batch):
            out = x[k, : wide[i].size(0), : wide[i].size(1)]
            result[i] = out.T if matrices[i].size(0) > matrices[i].size(1) else out
    return result  # type: ignore[return-value]


def _padding_batches(wide: list[Tensor]) -> list[list[int]]:
    """Indices of `wide` in batches: every matrix of at most `_SMALL` elements in one, each
    larger shape in its own."""
    batches: dict[object, list[int]] = {}
    for i, matrix in enumerate(wide):
        key = "small" if matrix.numel() <= _SMALL else tuple(matrix.shape)
        batches.setdefault(key, []).append(i)
    return list(batches.values())


class PufferMuon(torch.optim.Optimizer):
    """Muon on every parameter, the update of PufferLib 3.0's trainer (heavyball's ForeachMuon).

    For each parameter p with gradient g, momentum m (zero at first) and learning rate lr::

        m <- beta * m + (1 - beta) * g        (an average of gradients)
        u  = g + m                            (Nesterov: the gradient ahead of the average)

    or, with `momentum_rule="sum"` (PufferLib 4.0's Muon)::

        m <- beta * m + g                     (a sum of gradients)
        u  = g + beta * m

    and then, either way::

        u <- newton_schulz(u) * sqrt(max(1, rows / cols))   for matrices (a conv kernel is
                                              viewed as (out_channels, rest)); vectors keep u
        p <- p * (1 - lr * weight_decay) - lr * u

    A matrix's step thus has unit spectral scale whatever its gradient's size, and a vector's
    (biases, log-std) is its averaged gradient times lr, as plain momentum SGD.

    Args:
        params: parameters or parameter groups.
        lr: learning rate, applied as it is.
        momentum: beta, the average's weight on the past.
        weight_decay: decoupled weight decay (0 in PufferLib's trainer).
        eps: floor of the Frobenius norm a matrix is divided by before the iteration.
        momentum_rule: "average" (3.0's) or "sum" (4.0's), as above.
    """

    def __init__(
        self,
        params,
        lr: float,
        momentum: float = 0.95,
        weight_decay: float = 0.0,
        eps: float = 1e-7,
        momentum_rule: str = "average",
    ):
        if momentum_rule not in MUON_MOMENTUM_RULES:
            raise APIUsageError(
                f"PufferMuon: momentum_rule is {momentum_rule!r}; use one of {MUON_MOMENTUM_RULES}"
            )
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "weight_decay": weight_decay,
            "eps": eps,
            "momentum_rule": momentum_rule,
        }
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            updates = []
            for param in params:
                if param.grad.is_sparse or torch.is_complex(param):
                    raise APIUsageError("PufferMuon takes dense real gradients")
                state = self.state[param]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(param)
                buffer, beta = state["momentum_buffer"], group["momentum"]
                if group["momentum_rule"] == "sum":
                    buffer.mul_(beta).add_(param.grad)
                    updates.append(param.grad + beta * buffer)
                else:
                    updates.append(param.grad + buffer.lerp_(param.grad, 1 - beta))
            matrices = [i for i, u in enumerate(updates) if u.ndim >= 2]
            flat = [updates[i].reshape(updates[i].size(0), -1) for i in matrices]
            for i, u in zip(matrices, newton_schulz(flat, eps=group["eps"]), strict=True):
                rows, cols = u.shape
                updates[i] = u.view_as(params[i]) * math.sqrt(max(1.0, rows / cols))
            if group["weight_decay"]:
                torch._foreach_mul_(params, 1 - group["lr"] * group["weight_decay"])
            torch._foreach_add_(params, updates, alpha=-group["lr"])
        return loss


def make_optimizer(model: nn.Module, config: TrainConfig) -> torch.optim.Optimizer:
    """The optimizer `config.optimizer` names, at `config.learning_rate`.

    'muon' is `PufferMuon` with momentum `config.muon_momentum`; 'adam' is torch's fused Adam
    (one pass over all tensors) with `adam_beta1`, `adam_beta2` and `adam_eps`. Both decay
    weights by `config.weight_decay`, decoupled from the gradient (AdamW's rule for Adam).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    if config.optimizer == "adam":
        return torch.optim.Adam(
            params,
            lr=config.learning_rate,
            betas=(config.adam_beta1, config.adam_beta2),
            eps=config.adam_eps,
            weight_decay=config.weight_decay,
            decoupled_weight_decay=True,
            fused=True,
        )
    if config.optimizer != "muon":
        raise APIUsageError(f"train.optimizer is {config.optimizer!r}; use 'muon' or 'adam'")
    return PufferMuon(
        params,
        lr=config.learning_rate,
        momentum=config.muon_momentum,
        weight_decay=config.weight_decay,
        momentum_rule=config.muon_momentum_rule,
    )
