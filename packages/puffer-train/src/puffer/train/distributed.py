"""Multi-process data-parallel training under `torchrun` (gloo on CPU, NCCL on GPU).

Each rank runs its own vecenv (seeded with seed + rank) and its own rollout; after every
backward pass the gradients are averaged across ranks, so identical initial parameters (rank 0's,
broadcast once) stay identical. Doing the all-reduce by hand rather than through
`DistributedDataParallel` keeps the policy's two entry points (`forward_eval`, `forward_train`)
free of DDP's forward hooks.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as dist
from torch import Tensor, nn

__all__ = [
    "average_gradients",
    "broadcast_parameters",
    "init_from_env",
    "local_rank",
    "rank_and_world",
]


def init_from_env(device: str = "auto") -> bool:
    """Join the process group torchrun describes (WORLD_SIZE > 1); returns whether it did.

    The backend is NCCL when CUDA is used and available, gloo otherwise.
    """
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or dist.is_initialized():
        return dist.is_initialized()
    use_cuda = device != "cpu" and torch.cuda.is_available()
    dist.init_process_group("nccl" if use_cuda else "gloo")
    return True


def rank_and_world() -> tuple[int, int]:
    """(rank, world size); (0, 1) outside a process group."""
    if not dist.is_initialized():
        return 0, 1
    return dist.get_rank(), dist.get_world_size()


def local_rank() -> int:
    """This process's index on its machine (torchrun's LOCAL_RANK)."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def broadcast_parameters(module: nn.Module) -> None:
    """Copy rank 0's parameters and buffers to every rank (no-op outside a group)."""
    if not dist.is_initialized():
        return
    for tensor in [*module.parameters(), *module.buffers()]:
        dist.broadcast(tensor.data, src=0)


def average_gradients(flat_grad: Tensor) -> None:
    """All-reduce the mean of the gradients in place in their flat buffer (`FlatParameters.
    grad`, where every parameter's gradient is a view), one collective (no-op outside a
    group)."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return
    dist.all_reduce(flat_grad)
    flat_grad /= dist.get_world_size()
