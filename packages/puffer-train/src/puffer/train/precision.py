"""`train.precision`: what the policy computes in, its parameters (the master weights) float32.

'bfloat16' runs the rollout's and the update's policy passes under `torch.autocast`: matrix
products take bfloat16 copies of the float32 weights and activations (one cast per weight
per pass; AMX or AVX512-BF16 on the CPU, tensor cores on a GPU), the compiled recurrent
kernels run in float32 (`puffer.kernels.sequence.float32_in_autocast`), and the trainer takes the
policy's outputs back to float32 (`policy_outputs`) before sampling and the loss. Gradients
reach the float32 parameters through the casts, so the flat gradient buffer, the clip and the
optimizer stay float32, as PufferLib 4.0 keeps its master weights.
"""

from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager

import torch
from torch import Tensor

__all__ = ["compute", "policy_outputs"]


def compute(precision: str, device: torch.device) -> AbstractContextManager:
    """The context the policy's passes run in at `precision` on `device`: autocast to
    bfloat16 (its cast cache off, as CUDA-graph capture needs), or nothing for float32."""
    if precision == "float32":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=False)


def policy_outputs(params: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """The head's params and the value as float32 (bfloat16 under autocast; unchanged when
    they are float32 already)."""
    return params.float(), value.float()
