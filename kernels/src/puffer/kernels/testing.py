"""Helpers for testing code against the kernels' references: random inputs and a closeness check.

Used by this package's tests, puffer-train's tests and ``benchmarks/kernels.py``, so every check
draws inputs the same way.
"""

from __future__ import annotations

import torch

__all__ = ["assert_relative_close", "random_advantage_batch"]


def random_advantage_batch(
    segments: int, horizon: int, seed: int, device: str | torch.device = "cpu"
) -> tuple[torch.Tensor, ...]:
    """Random puff-advantage inputs with terminals and truncations sprinkled (some rows both).

    Args:
        segments: S.
        horizon: T.
        seed: seeds a private generator (the global RNG is untouched).
        device: where the tensors are put.

    Returns:
        ``(values, rewards, terminals, truncations, final_values, ratio, next_values)``: (S, T)
        float32 normal values and rewards, (S, T) bool terminals (5 %) and truncations (3 %, so
        most fall inside a segment), (S, T) float32 normal final values (independent of
        ``values``, so a kernel that read V_t on a truncated row would differ), (S, T) ratios
        uniform in [0.3, 2.0], (S,) float32 next values.

    Example:
        >>> batch = random_advantage_batch(4, 8, seed=0)
        >>> [tuple(x.shape) for x in batch]
        [(4, 8), (4, 8), (4, 8), (4, 8), (4, 8), (4, 8), (4,)]
    """
    g = torch.Generator().manual_seed(seed)
    shape = (segments, horizon)
    values = torch.randn(shape, generator=g)
    rewards = torch.randn(shape, generator=g)
    terminals = torch.rand(shape, generator=g) < 0.05
    truncations = torch.rand(shape, generator=g) < 0.03
    ratio = 0.3 + 1.7 * torch.rand(shape, generator=g)
    next_values = torch.randn(segments, generator=g)
    final_values = torch.randn(shape, generator=g)
    batch = (values, rewards, terminals, truncations, final_values, ratio, next_values)
    return tuple(x.to(device) for x in batch)


def assert_relative_close(
    actual: torch.Tensor, expected: torch.Tensor, tolerance: float = 1e-5
) -> None:
    """Assert max |actual - expected| / max |expected| < tolerance (and elementwise closeness).

    Raises:
        AssertionError: naming the relative error found.
    """
    scale = expected.abs().max().clamp(min=1e-12)
    relative = ((actual - expected).abs().max() / scale).item()
    assert relative < tolerance, f"relative error {relative:.3g} >= {tolerance:g}"
    torch.testing.assert_close(
        actual, expected, rtol=tolerance, atol=tolerance * scale.item(), equal_nan=False
    )
