"""Puff advantage and segment priorities: the validated public functions.

The computations live in the ``puffer-kernels`` package: ``torch.library`` custom ops
(``torch.ops.puffer.puff_advantage``, ``torch.ops.puffer.segment_priorities``) whose CPU and
CUDA kernels are compiled from ``kernels/csrc``, and their pure-torch references
(``*_reference``, re-exported here), which the tests hold equal. Where a library was not built
the op runs the reference; ``kernel_libraries()`` says which is in use. The functions here
check shapes, dtypes and devices, then call the op.

Layout: row t of a segment holds V_t = V(o_t) and r_{t+1}, d_{t+1} (terminal),
u_{t+1} (truncation) that came back for a_t, F_t = V(final obs) where u_{t+1} (the value of the
observation the truncated episode ended on, which auto-reset keeps out of the next row), and the
ratio w_t = pi_new / pi_old.
"""

from __future__ import annotations

import torch

from puffer.core.errors import APIUsageError
from puffer.kernels import (
    kernel_libraries,
    puff_advantage_reference,
    segment_priorities_reference,
)

__all__ = [
    "kernel_libraries",
    "puff_advantage",
    "puff_advantage_reference",
    "segment_priorities",
    "segment_priorities_reference",
]


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
    final_values: torch.Tensor,
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
        nextV_t = F_t where u_{t+1}, else V_{t+1} (t < T-1) or next_values (t = T-1)
        delta_t = rho_t * (r_{t+1} + gamma * nextV_t * (1 - d_{t+1}) - V_t)
        A_t = delta_t + gamma * lam * c_t * (1 - d_{t+1}) * (1 - u_{t+1}) * A_{t+1}

    Under auto-reset row t + 1 after a truncation is the next episode's first observation, so
    the truncated row bootstraps from F_t = V(final obs) instead (a trainer whose env keeps no
    final observation passes V_t there). Returns are ``advantages + values``. The result carries no
    gradient. Runs the compiled CPU or CUDA kernel for the inputs' device (torch reference when
    that library was not built); non-contiguous inputs are copied. Asynchronous on CUDA.

    Args:
        values: (S, T) float32, V(o_t) for segment s, step t.
        rewards: (S, T) float32, r_{t+1}.
        terminals: (S, T) bool or float (non-zero means set), d_{t+1}.
        truncations: (S, T) bool or float (non-zero means set), u_{t+1}.
        final_values: (S, T) float32, F_t = V(final obs) on truncated rows; read nowhere else.
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
        puffer.kernels.KernelLaunchError: when a CUDA launch fails.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> v, r = torch.rand(4, 8, generator=g), torch.rand(4, 8, generator=g)
        >>> d = torch.zeros(4, 8, dtype=torch.bool)
        >>> adv = puff_advantage(v, r, d, d, v, torch.ones(4, 8), torch.zeros(4), 0.99, 0.95, 1.0, 1.0)
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
    named = (("values", values), ("rewards", rewards), ("final_values", final_values))
    for name, x in (*named, ("ratio", ratio)):
        _check_float32(x, name, shape, op)
    _check_float32(next_values, "next_values", shape[:1], op)
    tensors = (values, rewards, terminals, truncations, final_values, ratio, next_values)
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
        final_values.detach(),
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
