"""PufferNet's MinGRU layer over (B, T) segments as ``torch.library`` ops: the gates, the scan
and the highway of one layer in one kernel call forward and one backward.

Per unit, from the layer's pre-activations ``pre = [h~ | g | p] = x W^T`` (B, T, 3H)::

    z = sigmoid(g),  c = phi(h~)   (h~ + 1/2 for h~ >= 0, sigmoid(h~) below)
    h_t = h_{t-1} + z (c - h_{t-1})           (h_{t-1} cut to 0 where starts[:, t], t > 0)
    y_t = x_t + sigmoid(p) (h_t - x_t)        (the highway gate)

Computed as separate torch ops (sigmoids, a `where`, the scan, the highway, each a pass over a
(B, T, H) tensor saved for backward) the elementwise work cost 2.3x the layer's two matrix
products on the CPU; fused, each step reads the row's pre-activations once and keeps its state
in registers. ``mingru_scan_reference`` is the same computation as a Python time loop.
``mingru_step`` is one step (the rollout's), through the same kernel where no gradient is
needed.
"""

from __future__ import annotations

import torch
from torch import Tensor

from puffer.kernels.sequence import _check, _has_kernel, _launch, _ptrs, float32_in_autocast

__all__ = ["mingru_scan", "mingru_scan_reference", "mingru_step"]


@torch.library.custom_op("puffer::mingru_scan", mutates_args=(), device_types=("cpu", "cuda"))
def _mingru_op(pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor) -> tuple[Tensor, Tensor]:
    pre, x, h0 = (t.contiguous() for t in (pre, x, h0))
    flags = starts.contiguous().view(torch.uint8)
    batch, steps, hidden = x.shape
    y, h = torch.empty_like(x), torch.empty_like(x)
    args = [*_ptrs(pre, x, h0, flags, y, h), batch, steps, hidden]
    _launch("mingru_scan", x.device, x.dtype, batch, *args)
    return y, h


@_mingru_op.register_fake
def _(pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor) -> tuple[Tensor, Tensor]:
    return torch.empty_like(x), torch.empty_like(x)


@torch.library.custom_op(
    "puffer::mingru_scan_backward", mutates_args=(), device_types=("cpu", "cuda")
)
def _mingru_backward_op(
    pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor, h: Tensor, grad_y: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    pre, x, h0, grad_y = (t.contiguous() for t in (pre, x, h0, grad_y))
    flags = starts.contiguous().view(torch.uint8)
    batch, steps, hidden = x.shape
    grad_pre, grad_x, grad_h0 = torch.empty_like(pre), torch.empty_like(x), torch.empty_like(h0)
    args = [*_ptrs(pre, x, h0, flags, h, grad_y, grad_pre, grad_x, grad_h0)]
    _launch("mingru_scan_backward", x.device, x.dtype, batch, *args, batch, steps, hidden)
    return grad_pre, grad_x, grad_h0


@_mingru_backward_op.register_fake
def _(pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor, h: Tensor, grad_y: Tensor):
    return torch.empty_like(pre), torch.empty_like(x), torch.empty_like(h0)


def _setup_context(ctx, inputs, output) -> None:
    pre, x, h0, starts = inputs
    ctx.save_for_backward(pre, x, h0, starts, output[1])


def _backward(ctx, grad_y: Tensor, grad_h: Tensor | None):
    # The states `h` are saved for backward, not a differentiable output: `mingru_scan`
    # returns y only, so nothing downstream can depend on them.
    pre, x, h0, starts, h = ctx.saved_tensors
    grad_pre, grad_x, grad_h0 = _mingru_backward_op(pre, x, h0, starts, h, grad_y)
    return grad_pre, grad_x, grad_h0, None


_mingru_op.register_autograd(_backward, setup_context=_setup_context)


def mingru_scan_reference(pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor) -> Tensor:
    """``mingru_scan`` as a Python time loop of torch ops (the tests' reference)."""
    pre_h, pre_g, pre_p = pre.chunk(3, dim=-1)
    candidate = torch.where(pre_h >= 0, pre_h + 0.5, torch.sigmoid(pre_h))
    z, s = torch.sigmoid(pre_g), torch.sigmoid(pre_p)
    h, outputs = h0, []
    for t in range(x.shape[1]):
        if t > 0:
            h = torch.where(starts[:, t, None], torch.zeros_like(h), h)
        h = h + z[:, t] * (candidate[:, t] - h)
        outputs.append(x[:, t] + s[:, t] * (h - x[:, t]))
    return torch.stack(outputs, dim=1)


@float32_in_autocast
def mingru_scan(pre: Tensor, x: Tensor, h0: Tensor, starts: Tensor) -> Tensor:
    """One MinGRU layer with a highway gate over (B, T) segments, differentiable in `pre`, `x`
    and `h0` (the equations in the module docstring).

    Args:
        pre: (B, T, 3H) pre-activations [h~ | g | p] (the layer's product of `x`).
        x: (B, T, H) the layer's input (the highway's other branch).
        h0: (B, H) the state before step 0.
        starts: (B, T) bool, True where an episode began (the state is cut; t = 0 ignored).

    Returns:
        (B, T, H) y. Runs the compiled kernel for float32/float64 on a device with a built
        library, else the reference loop.

    Raises:
        ValueError: on mismatched shapes, dtypes or devices.

    Example:
        >>> pre, x = torch.zeros(1, 2, 3), torch.ones(1, 2, 1)
        >>> mingru_scan(pre, x, torch.zeros(1, 1), torch.zeros(1, 2, dtype=torch.bool)).flatten()
        tensor([0.6250, 0.7188])
    """
    if x.dim() != 3:
        raise ValueError(f"mingru_scan: x has shape {tuple(x.shape)}, expected (B, T, H)")
    batch, steps, hidden = x.shape
    expected = {
        "pre": (batch, steps, 3 * hidden),
        "x": (batch, steps, hidden),
        "h0": (batch, hidden),
        "starts": (batch, steps),
    }
    _check("mingru_scan", expected, {"pre": pre, "x": x, "h0": h0, "starts": starts})
    if starts.dtype != torch.bool:
        raise ValueError(f"mingru_scan: starts is {starts.dtype}, expected torch.bool")
    if not _has_kernel(x):
        return mingru_scan_reference(pre, x, h0, starts)
    return _mingru_op(pre, x, h0, starts)[0]


@float32_in_autocast
def mingru_step(pre: Tensor, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
    """One step of the layer: pre (N, 3H), x (N, H), h (N, H) the state (already cut) ->
    (y (N, H), the new state (N, H)).

    Without gradients, for float32/float64 on a device with a built library, one kernel call
    (the scan at T = 1); otherwise the equations as torch ops, differentiable.
    """
    if _has_kernel(x) and not (
        torch.is_grad_enabled() and any(t.requires_grad for t in (pre, x, h))
    ):
        no_start = torch.zeros(x.shape[0], 1, dtype=torch.bool, device=x.device)
        y, new_h = _mingru_op(pre.unsqueeze(1), x.unsqueeze(1), h, no_start)
        return y.squeeze(1), new_h.squeeze(1)
    pre_h, pre_g, pre_p = pre.chunk(3, dim=-1)
    candidate = torch.where(pre_h >= 0, pre_h + 0.5, torch.sigmoid(pre_h))
    new_h = h + torch.sigmoid(pre_g) * (candidate - h)
    return x + torch.sigmoid(pre_p) * (new_h - x), new_h
