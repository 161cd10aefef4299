"""A policy's parameters in one flat buffer and their gradients in another (`FlatParameters`).

Each parameter's `.data` becomes a view of `FlatParameters.data` and its `.grad` a view of
`FlatParameters.grad`, at the same offset. Backward accumulates into an existing `.grad` in
place, so gradients land in the flat buffer; an optimizer then updates every parameter with a
few kernels over whole buffers instead of a few per tensor, the gradient norm is one
reduction, and the addresses of parameters, gradients and optimizer state stay fixed for the
run (what a captured CUDA graph of the update needs). `puffer.train.optim`'s `FlatMuon` and
`FlatAdam` step over these buffers.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from puffer.core import APIUsageError

__all__ = ["ALIGN", "FlatParameters"]

# Each view starts at a multiple of 16 elements (64 bytes in float32): a cache line on the CPU
# and an address CUDA's vectorized loads accept. The gaps stay zero in every buffer, and every
# update keeps zeros zero, so they change no norm and no step.
ALIGN = 16


def _dense(tensor: Tensor) -> bool:
    """Whether `tensor` covers exactly numel() consecutive elements (row-major or, for 4-D
    conv kernels, channels-last): the layouts a flat view can take over as they are."""
    if tensor.is_contiguous():
        return True
    return tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last)


class FlatParameters:
    """`params` re-pointed into one flat buffer, their gradients into another.

    Args:
        params: the trainable parameters (leaf tensors with requires_grad), of one dtype on
            one device, each row-major (or channels-last 4-D); their values are kept.

    Attributes:
        params: the parameters, in order.
        offsets: each parameter's first element in the buffers.
        data: (total,) the parameters' values; `params[i]` is `view(data, i)`.
        grad: (total,) their gradients, zero at first; `params[i].grad` is `view(grad, i)`.

    Raises:
        APIUsageError: no parameters, several dtypes or devices, a strided layout, or a
            parameter twice.
    """

    def __init__(self, params: Sequence[Tensor]):
        self.params = list(params)
        if not self.params:
            raise APIUsageError("FlatParameters: no parameters to hold; pass a non-empty list")
        kinds = sorted({f"{p.dtype} on {p.device}" for p in self.params})
        if len(kinds) != 1:
            raise APIUsageError(
                f"FlatParameters: the parameters are {', '.join(kinds)}; one flat buffer holds "
                "one dtype on one device: move the module with .to(device, dtype) first"
            )
        if len({id(p) for p in self.params}) != len(self.params):
            raise APIUsageError("FlatParameters: a parameter is listed twice; list each once")
        for i, p in enumerate(self.params):
            if not _dense(p):
                raise APIUsageError(
                    f"FlatParameters: parameter {i} {tuple(p.shape)} has strides {p.stride()}; "
                    "make it contiguous (or channels-last) before flattening"
                )
        self.offsets: list[int] = []
        total = 0
        for p in self.params:
            self.offsets.append(total)
            total += -(-p.numel() // ALIGN) * ALIGN
        first = self.params[0]
        self.data = torch.zeros(total, dtype=first.dtype, device=first.device)
        self.grad = torch.zeros_like(self.data)
        with torch.no_grad():
            for i, p in enumerate(self.params):
                view = self.view(self.data, i)
                view.copy_(p)
                p.data = view
                p.grad = self.view(self.grad, i)

    def view(self, flat: Tensor, i: int) -> Tensor:
        """Parameter `i`'s view of `flat` (any buffer of `data`'s length): its shape and
        strides, at its offset."""
        p = self.params[i]
        return flat.as_strided(p.shape, p.stride(), self.offsets[i])

    def views(self, flat: Tensor) -> list[Tensor]:
        """Every parameter's view of `flat`, in order."""
        return [self.view(flat, i) for i in range(len(self.params))]

    def new_zeros(self) -> Tensor:
        """A zero buffer of `data`'s length, dtype and device (optimizer state, updates)."""
        return torch.zeros_like(self.data)

    def check_bound(self, owner: str) -> None:
        """Raise unless every parameter and gradient is still its view of the flat buffers.

        Args:
            owner: who steps the buffers, for the message.

        Raises:
            APIUsageError: a parameter's `.data` or `.grad` was replaced (`p.data = ...`,
                `p.grad = ...`, `module.zero_grad()` setting gradients to None, `module.to`
                another dtype), so a step over the buffers would miss it.
        """
        for i, p in enumerate(self.params):
            for got, flat in ((p, self.data), (p.grad, self.grad)):
                want = self.view(flat, i)
                if got is None or got.data_ptr() != want.data_ptr() or got.shape != want.shape:
                    raise APIUsageError(
                        f"{owner}: parameter {i} {tuple(p.shape)} no longer lives in the flat "
                        "buffers (its .data or .grad was replaced, e.g. by zero_grad("
                        f"set_to_none=True) or .to()); zero gradients with {owner}.zero_grad() "
                        "and build a new optimizer after moving the module"
                    )
