"""Dense float32 products on the CPU through oneDNN where torch's BLAS is slow.

torch's CPU wheels run ``aten::mm`` on MKL, which picks its code path by CPU vendor: on a CPU
that is not Intel's it never uses AVX-512, whatever the CPU has. torch also ships oneDNN, which
picks by instruction set. On a 2-core AMD EPYC (Zen 5) a (8192, 128) x (128, 512) product took
5.7 ms through MKL (~190 GFLOP/s, the AVX2 limit) and 2.7 ms through oneDNN (~395 GFLOP/s).

``linear`` is ``torch.nn.functional.linear`` with its forward and backward products on oneDNN
(``torch.ops.mkldnn._linear_pointwise``, the op torch's own compiler emits for CPU linear
layers) where ``onednn_matmul_enabled`` says so, and ``torch.nn.functional.linear`` itself
everywhere else. ``matmul`` is the same for a plain 2-D product. The results differ from MKL's
only in float rounding (the order of the sums); ``test_kernels_onednn.py`` holds the values and
gradients to the torch reference on random inputs.

Which library runs is decided once per process: oneDNN on CPUs whose vendor is not Intel (MKL
holds them to AVX2), MKL on Intel's. ``PUFFER_CPU_MATMUL=onednn`` or ``mkl`` overrides it, for
measuring one against the other (``benchmarks/train.py --cpu-matmul``).
"""

from __future__ import annotations

import functools
import os
import platform

import torch
from torch import Tensor

__all__ = [
    "Linear",
    "cpu_matmul_library",
    "linear",
    "matmul",
    "onednn_matmul_enabled",
    "onednn_pays",
    "summed_products",
]

_CHOICES = ("onednn", "mkl")


def _cpu_vendor() -> str:
    """The x86 vendor string from /proc/cpuinfo ('GenuineIntel', 'AuthenticAMD'), or ''."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


@functools.cache
def cpu_matmul_library() -> str:
    """'onednn' or 'mkl': which library runs ``linear`` and ``matmul`` on CPU float32 tensors.

    ``PUFFER_CPU_MATMUL`` ('onednn' or 'mkl') wins; otherwise oneDNN on an x86 CPU that is not
    Intel's, when torch was built with it, and torch's own BLAS (MKL) elsewhere.

    Raises:
        ValueError: ``PUFFER_CPU_MATMUL`` is set to anything else.
    """
    asked = os.environ.get("PUFFER_CPU_MATMUL", "").strip().lower()
    if asked and asked not in _CHOICES:
        raise ValueError(
            f"PUFFER_CPU_MATMUL is {asked!r}; set it to 'onednn' or 'mkl', or unset it to let "
            "puffer pick by CPU vendor"
        )
    available = torch.backends.mkldnn.is_available() and hasattr(
        torch.ops.mkldnn, "_linear_pointwise"
    )
    if asked == "onednn" and not available:
        raise ValueError(
            "PUFFER_CPU_MATMUL is 'onednn' but this torch build has no oneDNN linear op; unset it"
        )
    if asked:
        return asked
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    return "onednn" if available and x86 and _cpu_vendor() not in ("", "GenuineIntel") else "mkl"


def onednn_matmul_enabled(*tensors: Tensor) -> bool:
    """Whether ``linear``/``matmul`` of these tensors run on oneDNN: all float32 on the CPU,
    ``cpu_matmul_library()`` is 'onednn', the float32 matmul precision is not 'medium' and no
    CPU ``torch.autocast`` is on (in both, torch's own products may run in bfloat16, which
    these float32 calls would undo)."""
    return (
        all(t.device.type == "cpu" and t.dtype == torch.float32 for t in tensors)
        and cpu_matmul_library() == "onednn"
        and torch.get_float32_matmul_precision() != "medium"
        and not torch.is_autocast_enabled("cpu")
    )


# oneDNN's call costs ~15 us against MKL's ~3 us, so it pays only from ~4 M multiply-adds on,
# and not for narrow outputs (2-core AMD EPYC, 2 threads: 256 x 128 x 128 ran at 36 against 52
# us, 128 x 128 x 128 at 26 against 29, 1,024 x 128 x 4 at 28 against 18; 64 x 128 x 512 at 61
# against 54).
_MIN_MULTIPLY_ADDS = 1 << 22
_MIN_COLUMNS = 16


def onednn_pays(rows: int, inner: int, columns: int) -> bool:
    """Whether a (rows, inner) x (inner, columns) product runs faster on oneDNN than on MKL
    where MKL stays at AVX2: at least 4 M multiply-adds and 16 columns."""
    return rows * inner * columns >= _MIN_MULTIPLY_ADDS and columns >= _MIN_COLUMNS


def _product(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x (M, K) @ weight (N, K)^T + bias (N,), on oneDNN where ``onednn_pays`` and torch's
    own product otherwise; strided views need no copy either way."""
    (rows, inner), columns = x.shape, weight.shape[0]
    if not onednn_pays(rows, inner, columns):
        return torch.nn.functional.linear(x, weight, bias)
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


def _forward(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    return _product(x.reshape(-1, x.shape[-1]), weight, bias).view(*x.shape[:-1], weight.shape[0])


class _OneDNNLinear(torch.autograd.Function):
    """y = x W^T + b with each of the three products of forward and backward on oneDNN where
    ``onednn_pays`` for its shape."""

    @staticmethod
    def forward(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        return _forward(x, weight, bias)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        x, weight, bias = inputs
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None

    @staticmethod
    def backward(ctx, grad: Tensor):
        x, weight = ctx.saved_tensors
        grad_rows = grad.reshape(-1, grad.shape[-1])
        grad_x = grad_w = grad_b = None
        if ctx.needs_input_grad[0]:
            grad_x = _product(grad_rows, weight.t()).view(x.shape)
        if ctx.needs_input_grad[1]:
            # dW^T = x^T g: (K, M) @ (M, N), the long M as the inner dimension. Asked for as
            # dW = g^T x instead, oneDNN ran it at 60 % of this speed (its output rows short).
            rows = x.reshape(-1, x.shape[-1])
            grad_w = _product(rows.t(), grad_rows.t()).t().contiguous()
        if ctx.has_bias and ctx.needs_input_grad[2]:
            grad_b = grad_rows.sum(0)
        return grad_x, grad_w, grad_b


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``torch.nn.functional.linear(x, weight, bias)``: x (..., K), weight (N, K), bias (N,)
    -> (..., N), differentiable in all three. Its products run on oneDNN where
    ``onednn_matmul_enabled`` and ``onednn_pays``; small ones are torch's own, whole."""
    tensors = (x, weight) if bias is None else (x, weight, bias)
    if (
        x.dim() < 1
        or x.numel() * weight.shape[0] < _MIN_MULTIPLY_ADDS
        or not onednn_matmul_enabled(*tensors)
    ):
        return torch.nn.functional.linear(x, weight, bias)
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return _OneDNNLinear.apply(x, weight, bias)
    return _forward(x, weight, bias)  # no autograd node: the rollout's calls


def summed_products(x: Tensor, w_x: Tensor, h: Tensor, w_h: Tensor) -> Tensor:
    """x w_x^T + h w_h^T without gradients: x (B, I), w_x (N, I), h (B, H), w_h (N, H) -> (B, N).

    On oneDNN (where enabled and it pays) as one call for the two products, the second summed
    onto the first as it is written: the rollout LSTM cell's pre-activations took 0.61 against
    MKL's 1.24 ms at 1,024 x 128 -> 512 (2-core AMD EPYC). Else torch's `mm` and `addmm_`."""
    if onednn_matmul_enabled(x, w_x, h, w_h) and onednn_pays(*h.shape, w_h.shape[0]):
        return torch.ops.mkldnn._linear_pointwise.binary(h, _product(x, w_x), w_h, None, "add")
    return torch.mm(x, w_x.t()).addmm_(h, w_h.t())


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for a (M, K), b (K, N) -> (M, N), differentiable; products as in ``linear``."""
    if a.dim() != 2 or b.dim() != 2:
        return a @ b
    return linear(a, b.t())


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` whose products run through ``linear`` (oneDNN where enabled); the
    same parameters and state-dict keys, so checkpoints load into either."""

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)
