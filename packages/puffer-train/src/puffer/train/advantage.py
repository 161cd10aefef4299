"""Puff advantage and segment priorities: public functions, torch references, custom ops.

Each computation exists three times, and the tests hold them equal:

- a pure-torch reference (``*_reference``), readable and usable on any device;
- a ``torch.library`` custom op (``torch.ops.puffer.puff_advantage``,
  ``torch.ops.puffer.segment_priorities``) whose CPU kernel is the C++/OpenMP code in
  ``kernels/kernels_cpu.cpp`` and whose CUDA kernel is ``kernels/kernels_cuda.cu``, both called
  through ctypes. When a library was not built (no nvcc, ``PUFFER_CUDA=0``, an sdist build), the
  op quietly runs the reference for that device; ``kernel_libraries()`` says which is in use;
- the public wrappers ``puff_advantage`` and ``segment_priorities``, which validate shapes and
  dtypes and call the op.

Layout (DESIGN §6): row t of a segment holds V_t = V(o_t) and r_{t+1}, d_{t+1} (terminal),
u_{t+1} (truncation) that came back for a_t, and the ratio w_t = pi_new / pi_old.
"""

from __future__ import annotations

import torch

from puffer.core.errors import APIUsageError, PufferError
from puffer.train import _kernels

__all__ = [
    "kernel_libraries",
    "puff_advantage",
    "puff_advantage_reference",
    "segment_priorities",
    "segment_priorities_reference",
]


def kernel_libraries() -> dict[str, str | None]:
    """Paths of the compiled kernel libraries, None where the torch reference is used instead.

    Returns:
        ``{"cpu": path or None, "cuda": path or None}``.
    """
    return {device: _kernels.library_path(device) for device in ("cpu", "cuda")}


def puff_advantage_reference(
    values: torch.Tensor,
    rewards: torch.Tensor,
    terminals: torch.Tensor,
    truncations: torch.Tensor,
    ratio: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    lam: float,
    rho_clip: float,
    c_clip: float,
) -> torch.Tensor:
    """Pure-torch puff advantage; same arguments and result as ``puff_advantage``.

    Vectorized over segments, sequential over the horizon. No validation.
    """
    done = terminals.to(values.dtype)
    trunc = truncations.to(values.dtype)
    # Bootstrap the last row with V of the next observation instead of A = 0.
    next_v = torch.cat([values[:, 1:], next_values[:, None]], dim=1)
    # Under auto-reset a truncated episode's final observation is not in the buffer: V_t stands
    # in for its value, so truncation bootstraps rather than acting as a terminal.
    next_v = torch.where(trunc != 0, values, next_v)
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
    """Pure-torch segment priorities; same arguments and result as ``segment_priorities``."""
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
        raise PufferError(
            f"{op}: the CUDA kernel launch failed with {message!r}; the library was built with "
            "nvcc for sm_80/sm_90 — check the driver supports it, or rebuild CPU-only with "
            "PUFFER_CUDA=0 uv sync --reinstall-package puffer-train"
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
    tensors, hyper = args[:6], args[6:]
    values = tensors[0]
    lib = _kernels.library(values.device.type)
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
    lib = _kernels.library(advantages.device.type)
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


def _as_flags(flags: torch.Tensor, name: str, shape: torch.Size) -> torch.Tensor:
    if flags.shape != shape:
        raise APIUsageError(
            f"puff_advantage: {name} has shape {tuple(flags.shape)}, expected {tuple(shape)} "
            "like values; pass one flag per (segment, step)"
        )
    if flags.dtype == torch.bool:
        return flags
    if flags.is_floating_point():
        return flags != 0
    raise APIUsageError(
        f"puff_advantage: {name} has dtype {flags.dtype}, expected torch.bool or a float dtype; "
        f"convert with {name}.bool()"
    )


def _check_float32(x: torch.Tensor, name: str, shape: tuple[int, ...], op: str) -> None:
    if x.dtype != torch.float32 or tuple(x.shape) != shape:
        raise APIUsageError(
            f"{op}: {name} is a {x.dtype} tensor of shape {tuple(x.shape)}, expected float32 of "
            f"shape {shape}; convert with .float() and keep the (segments, horizon) layout"
        )


def puff_advantage(
    values: torch.Tensor,
    rewards: torch.Tensor,
    terminals: torch.Tensor,
    truncations: torch.Tensor,
    ratio: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    lam: float,
    rho_clip: float,
    c_clip: float,
) -> torch.Tensor:
    """Puff advantage: GAE with V-trace clipping, bootstrapped at segment ends and truncations.

    For each segment, backwards over t = T-1 … 0, with A_T = 0::

        rho_t = min(w_t, rho_clip);  c_t = min(w_t, c_clip)
        nextV_t = V_{t+1} (t < T-1), next_values (t = T-1), or V_t where u_{t+1}
        delta_t = rho_t * (r_{t+1} + gamma * nextV_t * (1 - d_{t+1}) - V_t)
        A_t = delta_t + gamma * lam * c_t * (1 - d_{t+1}) * (1 - u_{t+1}) * A_{t+1}

    Under auto-reset the final observation of a truncated episode is not in the buffer, so V_t
    stands in for its value. Returns are ``advantages + values``. The result carries no
    gradient. Runs the compiled CPU or CUDA kernel for the inputs' device (torch reference when
    that library was not built); non-contiguous inputs are copied. Asynchronous on CUDA.

    Args:
        values: (S, T) float32, V(o_t) for segment s, step t.
        rewards: (S, T) float32, r_{t+1}.
        terminals: (S, T) bool or float (non-zero means set), d_{t+1}.
        truncations: (S, T) bool or float (non-zero means set), u_{t+1}.
        ratio: (S, T) float32, pi_new / pi_old of a_t (ones for fresh data).
        next_values: (S,) float32, V of the observation after each segment's last row.
        gamma: discount.
        lam: GAE lambda.
        rho_clip: V-trace clip on the TD error weight (rho-bar).
        c_clip: V-trace clip on the trace (c-bar).

    Returns:
        (S, T) float32 advantages on the inputs' device.

    Raises:
        APIUsageError: on a wrong shape, dtype or device.
        PufferError: when a CUDA launch fails.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> v, r = torch.rand(4, 8, generator=g), torch.rand(4, 8, generator=g)
        >>> d = torch.zeros(4, 8, dtype=torch.bool)
        >>> adv = puff_advantage(v, r, d, d, torch.ones(4, 8), torch.zeros(4), 0.99, 0.95, 1.0, 1.0)
        >>> adv.shape, adv.dtype
        (torch.Size([4, 8]), torch.float32)
    """
    op = "puff_advantage"
    if values.dim() != 2 or values.shape[1] == 0:
        raise APIUsageError(
            f"{op}: values has shape {tuple(values.shape)}, expected (segments, horizon) with "
            "horizon >= 1"
        )
    shape = tuple(values.shape)
    for name, x in (("values", values), ("rewards", rewards), ("ratio", ratio)):
        _check_float32(x, name, shape, op)
    _check_float32(next_values, "next_values", shape[:1], op)
    tensors = (values, rewards, terminals, truncations, ratio, next_values)
    devices = {x.device for x in tensors}
    if len(devices) != 1:
        raise APIUsageError(
            f"{op}: inputs are on {sorted(map(str, devices))}, expected one device; "
            "move them with .to(values.device)"
        )
    terminals = _as_flags(terminals, "terminals", values.shape)
    truncations = _as_flags(truncations, "truncations", values.shape)
    return torch.ops.puffer.puff_advantage(
        values.detach(),
        rewards.detach(),
        terminals,
        truncations,
        ratio.detach(),
        next_values.detach(),
        float(gamma),
        float(lam),
        float(rho_clip),
        float(c_clip),
    )


def segment_priorities(advantages: torch.Tensor, alpha: float) -> torch.Tensor:
    """Sampling probabilities of segments for prioritized replay.

    p_i = (sum_t |A_it|)^alpha, normalized to sum to 1; uniform when every sum is 0. Runs the
    compiled kernel for the device (torch reference when not built). Asynchronous on CUDA.

    Args:
        advantages: (S, T) float32.
        alpha: priority exponent (0 gives uniform sampling).

    Returns:
        (S,) float32 probabilities on the advantages' device.

    Raises:
        APIUsageError: on a wrong shape or dtype.

    Example:
        >>> segment_priorities(torch.tensor([[1.0, -1.0], [0.0, 2.0]]), 1.0)
        tensor([0.5000, 0.5000])
    """
    if advantages.dim() != 2 or advantages.dtype != torch.float32:
        raise APIUsageError(
            f"segment_priorities: advantages is a {advantages.dtype} tensor of shape "
            f"{tuple(advantages.shape)}, expected float32 (segments, horizon)"
        )
    return torch.ops.puffer.segment_priorities(advantages.detach(), float(alpha))
