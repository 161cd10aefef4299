"""Optimizers: Muon for hidden weight matrices and AdamW for the rest, or Adam for all."""

from __future__ import annotations

import torch
from torch import nn

from puffer.core import APIUsageError
from puffer.train.config import TrainConfig

__all__ = ["CombinedOptimizer", "make_optimizer", "muon_parameters"]

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

    Muon uses `adjust_lr_fn="match_rms_adamw"`, so one learning rate serves both halves.
    """
    betas = (config.adam_beta1, config.adam_beta2)
    if config.optimizer == "adam":
        return torch.optim.Adam(
            model.parameters(), lr=config.learning_rate, betas=betas, eps=config.adam_eps
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
        )
    ]
    if muon:
        optimizers.append(
            torch.optim.Muon(
                muon,
                lr=config.learning_rate,
                momentum=config.muon_momentum,
                weight_decay=config.weight_decay,
                adjust_lr_fn="match_rms_adamw",
            )
        )
    return CombinedOptimizer(optimizers)
