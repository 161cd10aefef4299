"""Optimizers: Muon for hidden weight matrices and AdamW for the rest, or Adam for all."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from puffer.core import APIUsageError
from puffer.train.config import TrainConfig

__all__ = ["BatchedMuon", "CombinedOptimizer", "make_optimizer", "muon_parameters", "newton_schulz"]

# Output heads and everything that is not a 2-D matrix (biases, conv kernels, log std) stay
# with AdamW: Muon's orthogonalized update is meant for the linear maps into hidden features
# (Jordan et al., "Muon", 2024, keep embeddings and the output layer on AdamW).
_NOT_HIDDEN = ("head.", "value.")


def muon_parameters(model: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """Split trainable parameters into (2-D weights into hidden features for Muon, the rest)."""
    muon, rest = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        hidden = param.ndim == 2 and not any(p in f"{name}." for p in _NOT_HIDDEN)
        (muon if hidden else rest).append(param)
    return muon, rest


# Matrices up to this many elements share one zero-padded batch: at these sizes a product's
# per-call cost outweighs its arithmetic (a 128 x 128 x 128 bfloat16 product takes 30-45 us on a
# 2-core Xeon, mostly call overhead). Larger ones batch only with matrices of their own shape,
# where padding would add arithmetic.
_SMALL = 1 << 16


def newton_schulz(
    matrices: list[Tensor], coefficients: tuple[float, float, float], steps: int, eps: float
) -> list[Tensor]:
    """torch.optim.Muon's orthogonalization (bfloat16 quintic Newton-Schulz) of several 2-D
    matrices, batched.

    Each matrix is oriented wide (transposed when it has more rows than columns), cast to
    bfloat16 and divided by its own Frobenius norm, as torch does. Zero rows and columns pass
    through the iteration unchanged (X X^T gains zero rows and columns, so B X keeps them zero),
    so small matrices of different shapes share one zero-padded (k, rows, cols) batch, and
    larger ones of one shape another: each iteration's three products run once per batch
    instead of once per matrix.

    Returns:
        one bfloat16 matrix per input, of the input's shape. On the CPU an LSTM or MLP policy's
        matrices come out bit-identical to `torch.optim.Muon`'s per-matrix iteration; a small
        matrix padded into a larger batch may differ in the last bfloat16 bit of some entries,
        where the batched product's blocking rounds differently (`test_train_optim.py`).
    """
    a, b, c = coefficients
    wide = [m.T if m.size(0) > m.size(1) else m for m in matrices]
    result: list[Tensor | None] = [None] * len(matrices)
    for batch in _padding_batches(wide):
        rows = max(wide[i].size(0) for i in batch)
        cols = max(wide[i].size(1) for i in batch)
        x = wide[batch[0]].new_zeros((len(batch), rows, cols), dtype=torch.bfloat16)
        for k, i in enumerate(batch):
            x[k, : wide[i].size(0), : wide[i].size(1)] = wide[i]
        x.div_(x.norm(dim=(1, 2), keepdim=True).clamp(min=eps))
        for _ in range(steps):
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


def _adjusted_lr(lr: float, adjust_lr_fn: str | None, shape: torch.Size) -> float:
    """torch.optim.Muon's learning-rate scaling for a (fan-out A, fan-in B) matrix."""
    fan_out, fan_in = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, fan_out / fan_in))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(fan_out, fan_in))
    return lr * math.sqrt(fan_out / fan_in)  # "spectral_unclamped"; torch checks the name


class BatchedMuon(torch.optim.Muon):
    """`torch.optim.Muon` (same arguments, state and update) with the Newton-Schulz iterations of
    all its matrices run as one batch (`newton_schulz`).

    torch runs the iteration matrix by matrix: 15 small products each, whose per-call cost
    dominates at RL sizes. An LSTM 128 policy's three matrices (128 x 118, 2 x 512 x 128) took
    3.1 ms a step that way against 1.8 ms batched (2-core Xeon, 2 threads); a default LSTM
    epoch runs 8 steps.
    """

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            momentum = group["momentum"]
            updates = []
            for param in params:
                if param.grad.is_sparse or torch.is_complex(param):
                    raise RuntimeError("Muon takes dense real gradients")
                state = self.state[param]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(param.grad)
                buffer = state["momentum_buffer"]
                buffer.lerp_(param.grad, 1 - momentum)
                updates.append(param.grad.lerp(buffer, momentum) if group["nesterov"] else buffer)
            orthogonal = newton_schulz(
                updates, group["ns_coefficients"], group["ns_steps"], group["eps"]
            )
            lr = float(group["lr"])
            for param, update in zip(params, orthogonal, strict=True):
                param.mul_(1 - lr * group["weight_decay"])
                param.add_(update, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], param.shape))
        return loss


class CombinedOptimizer:
    """Several optimizers stepped as one; `param_groups` is the union (for LR schedules)."""

    def __init__(self, optimizers: list[torch.optim.Optimizer]):
        self.optimizers = optimizers

    @property
    def param_groups(self) -> list[dict]:
        # Looked up on every use: `load_state_dict` replaces each optimizer's group dicts, and
        # a list taken at construction would set the LR of groups no optimizer reads any more.
        return [g for opt in self.optimizers for g in opt.param_groups]

    def step(self) -> None:
        for opt in self.optimizers:
            opt.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for opt in self.optimizers:
            opt.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict:
        return {"optimizers": [opt.state_dict() for opt in self.optimizers]}

    def load_state_dict(self, state_dict: dict) -> None:
        states = state_dict["optimizers"]
        if len(states) != len(self.optimizers):
            raise APIUsageError(
                f"optimizer state holds {len(states)} optimizers, this run has "
                f"{len(self.optimizers)}; resume with the same train.optimizer"
            )
        for opt, state in zip(self.optimizers, states, strict=True):
            opt.load_state_dict(state)


def make_optimizer(
    model: nn.Module, config: TrainConfig
) -> torch.optim.Optimizer | CombinedOptimizer:
    """The optimizer `config.optimizer` names, at `config.learning_rate`.

    Muon (`BatchedMuon`, torch's Muon with batched orthogonalization) uses
    `adjust_lr_fn="match_rms_adamw"`, so one learning rate serves both halves. Adam and AdamW
    run torch's fused kernel (CPU and CUDA): one pass over all their tensors, 0.08 against
    0.27 ms a step for an LSTM 128 policy's seven tensors (2-core Xeon).
    """
    betas = (config.adam_beta1, config.adam_beta2)
    if config.optimizer == "adam":
        return torch.optim.Adam(
            model.parameters(),
            lr=config.learning_rate,
            betas=betas,
            eps=config.adam_eps,
            fused=True,
        )
    if config.optimizer != "muon":
        raise APIUsageError(f"train.optimizer is {config.optimizer!r}; use 'muon' or 'adam'")
    muon, rest = muon_parameters(model)
    optimizers: list[torch.optim.Optimizer] = [
        torch.optim.AdamW(
            rest,
            lr=config.learning_rate,
            betas=betas,
            eps=config.adam_eps,
            weight_decay=config.weight_decay,
            fused=True,
        )
    ]
    if muon:
        optimizers.append(
            BatchedMuon(
                muon,
                lr=config.learning_rate,
                momentum=config.muon_momentum,
                weight_decay=config.weight_decay,
                adjust_lr_fn="match_rms_adamw",
            )
        )
    return CombinedOptimizer(optimizers)
