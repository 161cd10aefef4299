"""The C++ kernels against their torch references, a hand-computed case, and the op contracts."""

from __future__ import annotations

from importlib.metadata import version

import pytest
import torch

from puffer.core.errors import APIUsageError
from puffer.train import _kernels, advantage
from puffer.train.advantage import (
    kernel_libraries,
    puff_advantage,
    puff_advantage_reference,
    segment_priorities,
    segment_priorities_reference,
)

GAMMA, LAM = 0.995, 0.9


def random_batch(
    segments: int, horizon: int, seed: int, device: str = "cpu"
) -> tuple[torch.Tensor, ...]:
    """Fresh inputs with terminals and truncations sprinkled (some rows both) and ratios != 1."""
    g = torch.Generator().manual_seed(seed)
    shape = (segments, horizon)
    values = torch.randn(shape, generator=g)
    rewards = torch.randn(shape, generator=g)
    terminals = torch.rand(shape, generator=g) < 0.05
    truncations = torch.rand(shape, generator=g) < 0.03
    ratio = 0.3 + 1.7 * torch.rand(shape, generator=g)
    next_values = torch.randn(segments, generator=g)
    batch = (values, rewards, terminals, truncations, ratio, next_values)
    return tuple(x.to(device) for x in batch)


def assert_relative_close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    scale = expected.abs().max().clamp(min=1e-12)
    relative = ((actual - expected).abs().max() / scale).item()
    assert relative < 1e-5, f"relative error {relative:.3g}"
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5 * scale.item())


def test_cpu_library_is_built_for_this_version() -> None:
    assert kernel_libraries()["cpu"] is not None, "run `uv sync --reinstall-package puffer-train`"
    lib = _kernels.library("cpu")
    assert lib.puffer_kernels_version().decode() == version("puffer-train")


@pytest.mark.parametrize(
    ("segments", "horizon", "seed"), [(1, 1, 0), (7, 5, 1), (256, 64, 2), (1031, 33, 3)]
)
@pytest.mark.parametrize(("rho_clip", "c_clip"), [(1.0, 1.0), (1.5, 0.8)])
def test_advantage_kernel_matches_reference(
    segments: int, horizon: int, seed: int, rho_clip: float, c_clip: float
) -> None:
    batch = random_batch(segments, horizon, seed)
    args = (*batch, GAMMA, LAM, rho_clip, c_clip)
    assert_relative_close(puff_advantage(*args), puff_advantage_reference(*args))


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
@pytest.mark.parametrize(("segments", "horizon", "seed"), [(1, 1, 4), (300, 64, 5), (4099, 17, 6)])
def test_priority_kernel_matches_reference(
    segments: int, horizon: int, seed: int, alpha: float
) -> None:
    adv = torch.randn(segments, horizon, generator=torch.Generator().manual_seed(seed))
    adv[::3] = 0.0  # zero rows give zero priority unless alpha is 0
    probs = segment_priorities(adv, alpha)
    assert_relative_close(probs, segment_priorities_reference(adv, alpha))
    assert probs.sum().item() == pytest.approx(1.0, abs=1e-5)


def test_multithreaded_kernels_match_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real batches stay single-threaded below millions of elements; shrink the grain so the
    # OpenMP split (uneven on purpose: 1031 segments) is exercised here.
    monkeypatch.setattr(advantage, "_ADVANTAGE_GRAIN", 1)
    monkeypatch.setattr(advantage, "_PRIORITY_GRAIN", 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(max(threads, 2))
    try:
        batch = random_batch(1031, 33, 12)
        args = (*batch, GAMMA, LAM, 1.2, 0.9)
        adv = puff_advantage(*args)
        assert_relative_close(adv, puff_advantage_reference(*args))
        assert_relative_close(segment_priorities(adv, 0.8), segment_priorities_reference(adv, 0.8))
    finally:
        torch.set_num_threads(threads)


def test_advantage_by_hand() -> None:
    # gamma = lam = 0.5, clips 1. Segment 0: no episode ends, fresh ratios, so
    #   A2 = 2 + 0.5*4 - 3 = 1;  A1 = (0 + 0.5*3 - 2) + 0.25*A2 = -0.25;  A0 = 1 + 0.25*A1.
    # Segment 1: truncation after row 2 (V_2 stands in for the final obs and the trace is cut),
    # terminal after row 1, ratios 0.5 (clipped neither) and 2 (clipped to 1):
    #   A2 = 2 + 0.5*3 - 3 = 0.5;  A1 = 0.5*(0 - 2) = -1;  A0 = 0.5*(1 + 0.5*2 - 1) + 0.125*A1.
    values = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    rewards = torch.tensor([[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]])
    terminals = torch.tensor([[False, False, False], [False, True, False]])
    truncations = torch.tensor([[False, False, False], [False, False, True]])
    ratio = torch.tensor([[1.0, 1.0, 1.0], [0.5, 0.5, 2.0]])
    next_values = torch.tensor([4.0, 100.0])  # segment 1's is unused: its last row is truncated
    expected = torch.tensor([[0.9375, -0.25, 1.0], [0.375, -1.0, 0.5]])
    args = (values, rewards, terminals, truncations, ratio, next_values, 0.5, 0.5, 1.0, 1.0)
    torch.testing.assert_close(puff_advantage(*args), expected, rtol=0, atol=0)
    torch.testing.assert_close(puff_advantage_reference(*args), expected, rtol=0, atol=0)
    probs = segment_priorities(expected, 1.0)
    torch.testing.assert_close(probs, torch.tensor([2.1875, 1.875]) / 4.0625)


def test_all_zero_advantages_give_uniform_priorities() -> None:
    probs = segment_priorities(torch.zeros(8, 4), 0.8)
    torch.testing.assert_close(probs, torch.full((8,), 0.125))
    torch.testing.assert_close(segment_priorities_reference(torch.zeros(8, 4), 0.8), probs)


def test_float_flags_equal_bool_flags() -> None:
    values, rewards, terminals, truncations, ratio, next_values = random_batch(16, 8, 7)
    hyper = (GAMMA, LAM, 1.0, 1.0)
    as_bool = puff_advantage(values, rewards, terminals, truncations, ratio, next_values, *hyper)
    as_float = puff_advantage(
        values, rewards, terminals.float(), truncations.float(), ratio, next_values, *hyper
    )
    torch.testing.assert_close(as_bool, as_float, rtol=0, atol=0)


def test_non_contiguous_inputs() -> None:
    batch = random_batch(12, 10, 8)
    strided = tuple(x[::2] for x in batch)
    args = (*strided, GAMMA, LAM, 1.0, 1.0)
    assert_relative_close(puff_advantage(*args), puff_advantage_reference(*args))
    assert_relative_close(
        segment_priorities(batch[0][:, ::2], 0.8),
        segment_priorities_reference(batch[0][:, ::2], 0.8),
    )


def test_reference_runs_when_library_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulates a build without kernels (e.g. from an sdist): the op must quietly use the reference.
    monkeypatch.setattr(_kernels, "library", lambda device_type: None)
    batch = random_batch(9, 6, 9)
    args = (*batch, GAMMA, LAM, 1.0, 1.0)
    torch.testing.assert_close(puff_advantage(*args), puff_advantage_reference(*args))
    adv = batch[0]
    torch.testing.assert_close(segment_priorities(adv, 0.8), segment_priorities_reference(adv, 0.8))


def test_bad_inputs_raise_with_the_fix() -> None:
    values, rewards, terminals, truncations, ratio, next_values = random_batch(4, 3, 10)
    hyper = (GAMMA, LAM, 1.0, 1.0)
    with pytest.raises(APIUsageError, match=r"rewards is a torch.float64 .* expected float32"):
        puff_advantage(values, rewards.double(), terminals, truncations, ratio, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"next_values .* shape \(3,\), expected .* \(4,\)"):
        puff_advantage(values, rewards, terminals, truncations, ratio, next_values[:3], *hyper)
    with pytest.raises(
        APIUsageError, match=r"terminals has dtype torch.int64, .*terminals\.bool\(\)"
    ):
        puff_advantage(values, rewards, terminals.long(), truncations, ratio, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"truncations has shape \(4, 2\), expected \(4, 3\)"):
        puff_advantage(values, rewards, terminals, truncations[:, :2], ratio, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"values has shape \(4,\), expected"):
        puff_advantage(next_values, rewards, terminals, truncations, ratio, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"values has shape \(4, 0\), .* horizon >= 1"):
        empty = values[:, :0]
        puff_advantage(empty, empty, empty, empty, empty, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"advantages is a torch.float16 tensor"):
        segment_priorities(values.half(), 0.8)


def test_ops_pass_opcheck() -> None:
    batch = random_batch(32, 8, 11)
    torch.library.opcheck(torch.ops.puffer.puff_advantage.default, (*batch, GAMMA, LAM, 1.0, 0.9))
    torch.library.opcheck(torch.ops.puffer.segment_priorities.default, (batch[0], 0.8))
