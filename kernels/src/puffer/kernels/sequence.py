"""Recurrent sequences with episode resets as ``torch.library`` ops: an LSTM and a linear scan.

Training a recurrent policy replays (B, T) segments whose episodes may end anywhere inside: the
state entering step t is zeroed (cut) where ``starts[:, t]`` is True, t > 0; ``starts[:, 0]`` is
ignored because the stored segment-start state is already cut. Both computations run their time
loop inside one compiled kernel (C++/OpenMP on CPU, CUDA), forward and backward, so autograd
sees one node per sequence instead of T steps:

- ``lstm_sequence``: ``torch.nn.LSTM``'s cell (gate order i, f, g, o) over the sequence. The
  input projection x W_ih^T and the weight gradients are single matrix products in torch; the
  kernel runs the recurrent part (the bias, h_{t-1} W_hh^T, the cell, and their backward).
- ``linear_scan``: h_t = a_t h_{t-1} + b_t (the MinGRU recurrence: a_t = 0 cuts the state).

Each has a pure-torch reference with a Python time loop (``*_reference``) that the tests hold
equal, values and gradients. The public functions run the kernel for float32/float64 tensors
on a device whose library was built and the reference otherwise.
"""

from __future__ import annotations

import functools

import torch
from torch import Tensor

from puffer.kernels import _lib
from puffer.kernels.onednn import linear, matmul, summed_products
from puffer.kernels.ops import _cuda_check

__all__ = [
    "lstm_cell_inference",
    "linear_scan",
    "linear_scan_reference",
    "lstm_sequence",
    "lstm_sequence_reference",
]

_SUFFIX = {torch.float32: "f32", torch.float64: "f64"}
# Batch rows stepped together by the CPU LSTM (kRows in sequence_cpu.cpp): the thread split unit.
_LSTM_ROWS = 8


def _launch(name: str, device: torch.device, dtype: torch.dtype, rows: int, *args: object) -> None:
    lib = _lib.library(device.type)
    fn = getattr(lib, f"puffer_{name}_{device.type}_{_SUFFIX[dtype]}")
    if device.type == "cpu":
        fn(*args, max(1, min(torch.get_num_threads(), rows)))
    else:
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream(device).cuda_stream
            _cuda_check(lib, fn(*args, stream), name)


def float32_in_autocast(fn):
    """Run `fn` in float32 when it is called inside `torch.autocast` on its tensors' device:
    its floating tensor arguments cast to float32 and autocast off in its body.

    The compiled kernels take one float dtype and have no bfloat16 build; under autocast the
    products around them (a layer's pre-activations) come in bfloat16, so the recurrence runs
    in float32 on their values (the trainer's `train.precision` 'bfloat16'). Outside autocast
    `fn` runs as it is.
    """

    def as_float32(a: object) -> object:
        return a.float() if isinstance(a, Tensor) and a.is_floating_point() else a

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
        device = tensors[0].device.type
        if not torch.is_autocast_enabled(device):
            return fn(*args, **kwargs)
        cast = {k: as_float32(v) for k, v in kwargs.items()}
        with torch.autocast(device, enabled=False):
            return fn(*map(as_float32, args), **cast)

    return wrapper


def _has_kernel(x: Tensor) -> bool:
    return x.dtype in _SUFFIX and _lib.library(x.device.type) is not None


def _check(op: str, expected: dict[str, tuple[int, ...]], tensors: dict[str, Tensor]) -> None:
    """Shapes, one dtype, one device: the kernels index raw memory, so nothing may be off."""
    for name, shape in expected.items():
        if tuple(tensors[name].shape) != shape:
            raise ValueError(
                f"{op}: {name} has shape {tuple(tensors[name].shape)}, expected {shape} "
                "(see the docstring for the layout)"
            )
    floats = {n: t for n, t in tensors.items() if n != "starts"}
    kinds = {(t.dtype, t.device) for t in floats.values()}
    if len(kinds) != 1 or tensors.get("starts", floats["h0"]).device != floats["h0"].device:
        found = {n: f"{t.dtype} on {t.device}" for n, t in tensors.items()}
        raise ValueError(f"{op}: inputs must share one float dtype and device, got {found}")


def _ptrs(*tensors: Tensor) -> list[int]:
    return [t.data_ptr() for t in tensors]


# ---- LSTM ----------------------------------------------------------------------------------


@torch.library.custom_op("puffer::lstm_sequence", mutates_args=(), device_types=("cpu", "cuda"))
def _lstm_op(
    xproj: Tensor, w_hh: Tensor, h0: Tensor, c0: Tensor, starts: Tensor, bias: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    batch, steps, gates4 = xproj.shape
    hidden = gates4 // 4
    xproj, w_hh, h0, c0, bias = (t.contiguous() for t in (xproj, w_hh, h0, c0, bias))
    flags = starts.contiguous().view(torch.uint8)
    y = xproj.new_empty(batch, steps, hidden)
    c = torch.empty_like(y)
    gates = torch.empty_like(xproj)
    args = [*_ptrs(xproj, bias, w_hh, h0, c0, flags, y, c, gates), batch, steps, hidden]
    _launch("lstm_forward", xproj.device, xproj.dtype, -(-batch // _LSTM_ROWS), *args)
    return y, c, gates


@_lstm_op.register_fake
def _(xproj: Tensor, w_hh: Tensor, h0: Tensor, c0: Tensor, starts: Tensor, bias: Tensor):
    batch, steps, gates4 = xproj.shape
    y = xproj.new_empty(batch, steps, gates4 // 4)
    return y, torch.empty_like(y), torch.empty_like(xproj)


@torch.library.custom_op(
    "puffer::lstm_sequence_backward", mutates_args=(), device_types=("cpu", "cuda")
)
def _lstm_backward_op(
    w_hh: Tensor, c0: Tensor, starts: Tensor, c: Tensor, gates: Tensor, grad_y: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    batch, steps, hidden = c.shape
    w_hh, c0, grad_y = (t.contiguous() for t in (w_hh, c0, grad_y))
    flags = starts.contiguous().view(torch.uint8)
    grad_pre = torch.empty_like(gates)
    grad_h0, grad_c0 = torch.empty_like(c0), torch.empty_like(c0)
    args = [*_ptrs(w_hh, c0, flags, c, gates, grad_y, grad_pre, grad_h0, grad_c0)]
    args += [batch, steps, hidden]
    _launch("lstm_backward", c.device, c.dtype, -(-batch // _LSTM_ROWS), *args)
    return grad_pre, grad_h0, grad_c0


@_lstm_backward_op.register_fake
def _(w_hh: Tensor, c0: Tensor, starts: Tensor, c: Tensor, gates: Tensor, grad_y: Tensor):
    return torch.empty_like(gates), torch.empty_like(c0), torch.empty_like(c0)


def _lstm_setup_context(ctx, inputs, output) -> None:
    _, w_hh, h0, c0, starts, _ = inputs
    y, c, gates = output
    ctx.save_for_backward(w_hh, h0, c0, starts, y, c, gates)
    ctx.mark_non_differentiable(c, gates)
    # c and gates are saved state, never used downstream: no (B, T, 4H) zero gradients for them.
    ctx.set_materialize_grads(False)


def _lstm_backward(ctx, grad_y: Tensor, _grad_c: Tensor, _grad_gates: Tensor):
    w_hh, h0, c0, starts, y, c, gates = ctx.saved_tensors
    if grad_y is None:
        grad_y = torch.zeros_like(y)
    grad_pre, grad_h0, grad_c0 = _lstm_backward_op(w_hh, c0, starts, c, gates, grad_y)
    grad_w_hh = _grad_w_hh(grad_pre, y, h0, starts)
    grad_bias = grad_pre.sum((0, 1)) if ctx.needs_input_grad[5] else None
    return grad_pre, grad_w_hh, grad_h0, grad_c0, None, grad_bias


def _grad_w_hh(grad_pre: Tensor, y: Tensor, h0: Tensor, starts: Tensor) -> Tensor:
    """dL/dW_hh = sum over (b, t) of grad_pre[b, t]^T h_prev[b, t], (4H, H), where h_prev is the
    state step t read: h0 at t = 0, zero where it was cut, else y[b, t - 1]."""
    batch, steps, hidden = y.shape
    grad, out = grad_pre.reshape(-1, 4 * hidden), y.reshape(-1, hidden)
    if y.device.type != "cpu":
        # The row lists below cost a host-device sync; this costs two passes over h_prev.
        keep = ~starts
        keep[:, 0] = True
        h_prev = torch.cat([h0.unsqueeze(1), y[:, :-1]], dim=1) * keep.unsqueeze(-1).to(y.dtype)
        return grad.T @ h_prev.reshape(-1, hidden)
    # Flattened, row i's previous output is row i - 1: one product over the shifted rows, then
    # the rows where that is wrong (each segment's first, the cut ones) swapped for h0 or zero.
    # Building h_prev instead (a concatenation and a masking pass) took 6.9 vs 4.5 ms per
    # 8,192-step pass (LSTM 128, 2-core Xeon).
    first = torch.arange(0, batch * steps, steps, device=y.device)
    cut = starts.clone()
    cut[:, 0] = False
    wrong = torch.cat([first[1:], cut.reshape(-1).nonzero().squeeze(1)])
    grad_w_hh = matmul(out[:-1].T, grad[1:]).T
    grad_w_hh -= grad.index_select(0, wrong).T @ out.index_select(0, wrong - 1)
    grad_w_hh += grad.index_select(0, first).T @ h0
    return grad_w_hh


_lstm_op.register_autograd(_lstm_backward, setup_context=_lstm_setup_context)


def lstm_sequence_reference(
    x: Tensor,
    h0: Tensor,
    c0: Tensor,
    starts: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor,
    b_hh: Tensor,
) -> Tensor:
    """``lstm_sequence`` as a Python time loop of ``torch.lstm_cell`` (the tests' reference)."""
    keep = (~starts).to(x.dtype).unsqueeze(-1)
    h, c = h0, c0
    outputs = []
    for t in range(x.shape[1]):
        if t > 0:
            h, c = h * keep[:, t], c * keep[:, t]
        h, c = torch.lstm_cell(x[:, t], (h, c), w_ih, w_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1)


@float32_in_autocast
def lstm_sequence(
    x: Tensor,
    h0: Tensor,
    c0: Tensor,
    starts: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor,
    b_hh: Tensor,
) -> Tensor:
    """An LSTM layer over (B, T) segments with episode resets, differentiable in every input.

    For t = 0 … T-1: (h, c) = (0, 0) if starts[:, t] and t > 0; then
    (h, c) = lstm_cell(x_t, (h, c)) with ``torch.nn.LSTM``'s weights and gate order; y_t = h.

    Args:
        x: (B, T, I) float input.
        h0, c0: (B, H) state at each segment's first step (already cut).
        starts: (B, T) bool, True where an episode began at step t.
        w_ih: (4H, I); w_hh: (4H, H); b_ih, b_hh: (4H,) — ``nn.LSTM``'s ``*_l0`` parameters.

    Returns:
        (B, T, H) outputs y_t = h_t. Runs the compiled kernel for float32/float64 on a device
        with a built library (one time loop in C++ or CUDA, forward and backward), else the
        reference loop.

    Raises:
        ValueError: on a shape that does not fit the others, or mixed dtypes or devices.

    Example:
        >>> lstm = torch.nn.LSTM(4, 3, batch_first=True)
        >>> x, h0 = torch.randn(2, 5, 4), torch.zeros(2, 3)
        >>> starts = torch.zeros(2, 5, dtype=torch.bool)
        >>> y = lstm_sequence(x, h0, h0, starts, *lstm.parameters())
        >>> torch.allclose(y, lstm(x)[0], atol=1e-6)
        True
    """
    if x.dim() != 3 or w_hh.dim() != 2:
        raise ValueError(
            f"lstm_sequence: x has shape {tuple(x.shape)} and w_hh {tuple(w_hh.shape)}, expected "
            "(B, T, I) and (4H, H)"
        )
    (batch, steps, inputs), hidden = x.shape, w_hh.shape[1]
    tensors = dict(x=x, h0=h0, c0=c0, starts=starts, w_ih=w_ih, w_hh=w_hh, b_ih=b_ih, b_hh=b_hh)
    state, gates = (batch, hidden), (4 * hidden,)
    expected = {
        "h0": state,
        "c0": state,
        "starts": (batch, steps),
        "w_ih": (4 * hidden, inputs),
        "w_hh": (4 * hidden, hidden),
        "b_ih": gates,
        "b_hh": gates,
    }
    _check("lstm_sequence", expected, tensors)
    if not _has_kernel(x):
        return lstm_sequence_reference(x, h0, c0, starts, w_ih, w_hh, b_ih, b_hh)
    # The input projection for every step at once: one matrix product, outside the time loop.
    # The kernel adds the bias as it reads each step's row (a broadcast copy here costs a pass).
    xproj = linear(x, w_ih)
    y, _, _ = _lstm_op(xproj, w_hh, h0, c0, starts.bool(), b_ih + b_hh)
    return y


@torch.library.custom_op("puffer::lstm_cell_inference", mutates_args=(), device_types="cpu")
def _cell_op(pre: Tensor, c: Tensor, bias: Tensor) -> tuple[Tensor, Tensor]:
    pre, c, bias = pre.contiguous(), c.contiguous(), bias.contiguous()
    batch, hidden = c.shape
    h_out, c_out = torch.empty_like(c), torch.empty_like(c)
    lib = _lib.library("cpu")
    fn = getattr(lib, f"puffer_lstm_cell_cpu_{_SUFFIX[c.dtype]}")
    threads = max(1, min(torch.get_num_threads(), batch))
    fn(*_ptrs(pre, bias, c, h_out, c_out), batch, hidden, threads)
    return h_out, c_out


@_cell_op.register_fake
def _(pre: Tensor, c: Tensor, bias: Tensor):
    return torch.empty_like(c), torch.empty_like(c)


@float32_in_autocast
def lstm_cell_inference(
    x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor, b_hh: Tensor
) -> tuple[Tensor, Tensor]:
    """``torch.lstm_cell`` without gradients: its two products (``summed_products``), then the
    bias and the cell in one kernel pass.

    Args:
        x: (B, I) input; h, c: (B, H) state; weights as ``torch.nn.LSTM``'s ``*_l0``.

    Returns:
        (h, c) after the step, (B, H) each. Runs the CPU kernel for float32/float64 when no
        input needs a gradient and the CPU library was built; ``torch.lstm_cell`` otherwise
        (CUDA has its own fused cell).

    Example:
        >>> cell = torch.nn.LSTMCell(4, 3)
        >>> x, h = torch.randn(2, 4), torch.zeros(2, 3)
        >>> with torch.no_grad():
        ...     got = lstm_cell_inference(x, h, h, *cell.parameters())
        ...     torch.allclose(got[0], cell(x, (h, h))[0], atol=1e-6)
        True
    """
    fast = x.device.type == "cpu" and x.dtype in _SUFFIX and _lib.library("cpu") is not None
    if not fast or (torch.is_grad_enabled() and any(t.requires_grad for t in (x, h, w_ih, w_hh))):
        return torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
    return _cell_op(summed_products(x, w_ih, h, w_hh), c, b_ih + b_hh)


# ---- linear scan ---------------------------------------------------------------------------


@torch.library.custom_op("puffer::linear_scan", mutates_args=(), device_types=("cpu", "cuda"))
def _scan_op(a: Tensor, b: Tensor, h0: Tensor) -> Tensor:
    a, b, h0 = (t.contiguous() for t in (a, b, h0))
    batch, steps, width = a.shape
    h = torch.empty_like(a)
    _launch("linear_scan", a.device, a.dtype, batch, *_ptrs(a, b, h0, h), batch, steps, width)
    return h


@_scan_op.register_fake
def _(a: Tensor, b: Tensor, h0: Tensor) -> Tensor:
    return torch.empty_like(a)


@torch.library.custom_op(
    "puffer::linear_scan_backward", mutates_args=(), device_types=("cpu", "cuda")
)
def _scan_backward_op(
    a: Tensor, h0: Tensor, h: Tensor, grad_h: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    a, h0, grad_h = (t.contiguous() for t in (a, h0, grad_h))
    batch, steps, width = a.shape
    grad_a, grad_b, grad_h0 = torch.empty_like(a), torch.empty_like(a), torch.empty_like(h0)
    args = [*_ptrs(a, h0, h, grad_h, grad_a, grad_b, grad_h0), batch, steps, width]
    _launch("linear_scan_backward", a.device, a.dtype, batch, *args)
    return grad_a, grad_b, grad_h0


@_scan_backward_op.register_fake
def _(a: Tensor, h0: Tensor, h: Tensor, grad_h: Tensor):
    return torch.empty_like(a), torch.empty_like(a), torch.empty_like(h0)


def _scan_setup_context(ctx, inputs, output) -> None:
    a, _, h0 = inputs
    ctx.save_for_backward(a, h0, output)


def _scan_backward(ctx, grad_h: Tensor):
    a, h0, h = ctx.saved_tensors
    return _scan_backward_op(a, h0, h, grad_h)


_scan_op.register_autograd(_scan_backward, setup_context=_scan_setup_context)


def linear_scan_reference(a: Tensor, b: Tensor, h0: Tensor) -> Tensor:
    """``linear_scan`` as a Python time loop (the tests' reference)."""
    h = h0
    outputs = []
    for t in range(a.shape[1]):
        h = a[:, t] * h + b[:, t]
        outputs.append(h)
    return torch.stack(outputs, dim=1)


@float32_in_autocast
def linear_scan(a: Tensor, b: Tensor, h0: Tensor) -> Tensor:
    """h_t = a_t * h_{t-1} + b_t along dim 1 from h_{-1} = h0, differentiable in a, b and h0.

    Sequential and exact (no log space): a_t = 0 cuts the state, as an episode start does in
    MinGRU, and gradients stay finite there.

    Args:
        a, b: (B, T, W) float, same dtype and device.
        h0: (B, W) initial state.

    Returns:
        (B, T, W) h. Runs the compiled kernel for float32/float64 on a device with a built
        library, else the reference loop.

    Raises:
        ValueError: on mismatched shapes, dtypes or devices.

    Example:
        >>> a, b = torch.full((1, 3, 1), 0.5), torch.ones(1, 3, 1)
        >>> linear_scan(a, b, torch.zeros(1, 1)).flatten()
        tensor([1.0000, 1.5000, 1.7500])
    """
    if a.dim() != 3:
        raise ValueError(f"linear_scan: a has shape {tuple(a.shape)}, expected (B, T, W)")
    expected = {"b": tuple(a.shape), "h0": (a.shape[0], a.shape[2])}
    _check("linear_scan", expected, {"a": a, "b": b, "h0": h0})
    if not _has_kernel(a):
        return linear_scan_reference(a, b, h0)
    return _scan_op(a, b, h0)
