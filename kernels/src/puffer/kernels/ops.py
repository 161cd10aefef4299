"""Puff advantage and segment priorities as ``torch.library`` custom ops, with torch references.

Each computation exists twice here, and the tests hold them equal:

- a pure-torch reference (``*_reference``), readable and usable on any device;
- a custom op (``torch.ops.puffer.puff_advantage``, ``torch.ops.puffer.segment_priorities``)
  whose CPU kernel is the C++/OpenMP code in ``csrc/kernels_cpu.cpp`` and whose CUDA kernel is
  ``csrc/kernels_cuda.cu``, both called through ctypes (the advantage recurrence itself is one
  function in ``csrc/recurrence.h`` that both compile). When a library was not built (no nvcc,
  ``PUFFER_CUDA=0``), the op quietly runs the reference for that device; ``kernel_libraries()``
  says which is in use.

The ops take inputs as they are (no validation): ``puffer.train.advantage`` wraps them with the
shape and dtype checks users see. Layout: row t of a segment holds V_t = V(o_t) and
r_{t+1}, d_{t+1} (terminal), u_{t+1} (truncation) that came back for a_t, and the ratio
w_t = pi_new / pi_old.
"""

from __future__ import annotations

import torch

from puffer.kernels import _lib

__all__ = [
    "KernelLaunchError",
    "kernel_libraries",
    "puff_advantage_reference",
    "segment_priorities_reference",
]


class KernelLaunchError(RuntimeError):
    """A CUDA kernel launch failed (e.g. no kernel image for this GPU)."""


def kernel_libraries() -> dict[str, str | None]:
    """Paths of the compiled kernel libraries, None where the torch reference is used instead.

    Returns:
        ``{"cpu": path or None, "cuda": path or None}``.
    """
    return {device: _lib.library_path(device) for device in ("cpu", "cuda")}


def cpu_vector_bits() -> int | None:
    """Vector width, in bits, of the CPU sequence kernels' row work: 512 where the CPU has
    AVX-512 (about twice the speed of 256 on cores with two 512-bit FMA units), else 256; the
    environment variable ``PUFFER_KERNELS_VECTOR_BITS=256`` (read once per process) keeps them at
    256. The widths agree to float rounding (the last bit or two: the compiler contracts some
    products into FMAs differently). None when the CPU library was not built."""
    lib = _lib.library("cpu")
    return None if lib is None else int(lib.puffer_cpu_vector_bits())


def puff_advantage_reference(
    values: torch.Tensor,
    rewards: torch.Tensor,
    terminals: torch.Tensor,
    truncations: torch.Tensor,
    final_values: torch.Tensor,
    ratio: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    lam: float,
    rho_clip: float,
    c_clip: float,
) -> torch.Tensor:
    """Pure-torch puff advantage (see ``puffer.train.advantage.puff_advantage``).

    Args:
        values, rewards, final_values, ratio: (S, T) float; terminals, truncations: (S, T)
        bool; next_values: (S,) float; gamma, lam, rho_clip, c_clip: floats.

    Returns:
        (S, T) advantages, dtype of ``values``. Vectorized over segments, sequential over the
        horizon. No validation.
    """
    done = terminals.to(values.dtype)
    trunc = truncations.to(values.dtype)
    # Bootstrap the last row with V of the next observation instead of A = 0.
    next_v = torch.cat([values[:, 1:], next_values[:, None]], dim=1)
    # Under auto-reset the row after a truncation starts the next episode: a truncated row
    # bootstraps from V(final obs), kept beside it, rather than acting as a terminal.
    next_v = torch.where(trunc != 0, final_values, next_v)
    rho = ratio.clamp(max=rho_clip)
    c = ratio.clamp(max=c_clip)
    delta = rho * (rewards + gamma * next_v * (1 - done) - values)
    # Both a terminal and a truncation end the episode, so both cut the recursion.
    carry = gamma * lam * c * (1 - done) * (1 - trunc)
    adv = torch.empty_like(values)
    next_adv = torch.zeros_like(next_values)
    for t in range(values.shape[1] - 1, -1, -1):
        next_adv = delta[:, t] + carry[:, t] * next_adv
        adv[:, t] = next_adv
    return adv


def segment_priorities_reference(advantages: torch.Tensor, alpha: float) -> torch.Tensor:
    """Pure-torch segment priorities: (S, T) float advantages -> (S,) probabilities."""
    p = advantages.abs().sum(dim=1).pow(alpha)
    total = p.sum()
    # torch.where rather than an if keeps this free of a host-device sync.
    uniform = torch.full_like(p, 1.0 / max(p.numel(), 1))
    return torch.where(total > 0, p / total, uniform)


# Elements of work per OpenMP thread below which the CPU kernels run single-threaded. Waking a
# second thread saves ~1 ms on an idle 2-core machine but costs 10-30 ms when the cores are
# oversubscribed (env workers, other jobs): the parallel region waits for the slowest thread to
# be scheduled. Measured at 16k x 64 under load ~10: advantage 6-18 ms on one thread, 17-34 ms
# on two; priorities 0.2 ms on one, 15 ms on two. So a 1M-step batch stays on one thread.
_ADVANTAGE_GRAIN = 1 << 21
_PRIORITY_GRAIN = 1 << 22


def _threads(elements: int, grain: int) -> int:
    return max(1, min(torch.get_num_threads(), elements // grain))


def _cuda_check(lib: object, error: int, op: str) -> None:
    if error != 0:
        message = lib.puffer_cuda_error_string(error).decode()  # type: ignore[attr-defined]
        raise KernelLaunchError(
            f"{op}: the CUDA kernel launch failed with {message!r}; the library was built with "
            "nvcc for sm_80/sm_90 — check the driver supports it, or rebuild CPU-only with "
            "PUFFER_CUDA=0 uv sync --reinstall-package puffer-kernels"
        )


# The ops' default implementation is the reference: it serves devices without a compiled kernel.
_puff_advantage_op = torch.library.custom_op(
    "puffer::puff_advantage", puff_advantage_reference, mutates_args=()
)
_segment_priorities_op = torch.library.custom_op(
    "puffer::segment_priorities", segment_priorities_reference, mutates_args=()
)


@_puff_advantage_op.register_kernel(("cpu", "cuda"))
def _advantage_kernel(*args: torch.Tensor | float) -> torch.Tensor:
    tensors, hyper = args[:7], args[7:]
    values = tensors[0]
    lib = _lib.library(values.device.type)
    if lib is None:  # not built: the reference, without a warning (see kernel_libraries())
        return puff_advantage_reference(*args)
    inputs = [x.contiguous() for x in tensors]
    adv = torch.empty_like(inputs[0])
    segments, horizon = values.shape
    call = [x.data_ptr() for x in inputs] + [adv.data_ptr(), segments, horizon, *hyper]
    if values.device.type == "cpu":
        lib.puffer_advantage_cpu(*call, _threads(values.numel(), _ADVANTAGE_GRAIN))
    else:
        with torch.cuda.device(values.device):
            stream = torch.cuda.current_stream(values.device).cuda_stream
            _cuda_check(lib, lib.puffer_advantage_cuda(*call, stream), "puff_advantage")
    return adv


@_puff_advantage_op.register_fake
def _(values: torch.Tensor, *rest: torch.Tensor | float) -> torch.Tensor:
    return torch.empty_like(values)


@_segment_priorities_op.register_kernel(("cpu", "cuda"))
def _priorities_kernel(advantages: torch.Tensor, alpha: float) -> torch.Tensor:
    lib = _lib.library(advantages.device.type)
    if lib is None:
        return segment_priorities_reference(advantages, alpha)
    adv = advantages.contiguous()
    segments, horizon = adv.shape
    probs = adv.new_empty(segments)
    call = [adv.data_ptr(), probs.data_ptr(), segments, horizon, alpha]
    if adv.device.type == "cpu":
        lib.puffer_segment_priorities_cpu(*call, _threads(adv.numel(), _PRIORITY_GRAIN))
    else:
        with torch.cuda.device(adv.device):
            stream = torch.cuda.current_stream(adv.device).cuda_stream
            _cuda_check(
                lib, lib.puffer_segment_priorities_cuda(*call, stream), "segment_priorities"
            )
    return probs


@_segment_priorities_op.register_fake
def _(advantages: torch.Tensor, alpha: float) -> torch.Tensor:
    return advantages.new_empty(advantages.shape[0])
