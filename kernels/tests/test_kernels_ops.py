"""The compiled CPU kernels against their torch references, a hand-computed case, the op contracts."""

from __future__ import annotations

from importlib.metadata import version

import pytest
import torch

import puffer.kernels
from puffer.kernels import (
    _lib,
    kernel_libraries,
    ops,
    puff_advantage_reference,
    segment_priorities_reference,
)
from puffer.kernels.testing import assert_relative_close, random_advantage_batch

GAMMA, LAM = 0.995, 0.9
advantage = torch.ops.puffer.puff_advantage
priorities = torch.ops.puffer.segment_priorities


def test_cpu_library_is_built_for_this_version() -> None:
    assert kernel_libraries()["cpu"] is not None, "run `uv sync --reinstall-package puffer-kernels`"
    lib = _lib.library("cpu")
    assert lib.puffer_kernels_version().decode() == version("puffer-kernels")
    assert puffer.kernels.__version__ == version("puffer-kernels")


@pytest.mark.parametrize(
    ("segments", "horizon", "seed"), [(1, 1, 0), (7, 5, 1), (256, 64, 2), (1031, 33, 3)]
)
@pytest.mark.parametrize(("rho_clip", "c_clip"), [(1.0, 1.0), (1.5, 0.8)])
def test_advantage_kernel_matches_reference(
    segments: int, horizon: int, seed: int, rho_clip: float, c_clip: float
) -> None:
    batch = random_advantage_batch(segments, horizon, seed)
    args = (*batch, GAMMA, LAM, rho_clip, c_clip)
    assert_relative_close(advantage(*args), puff_advantage_reference(*args))


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
@pytest.mark.parametrize(("segments", "horizon", "seed"), [(1, 1, 4), (300, 64, 5), (4099, 17, 6)])
def test_priority_kernel_matches_reference(
    segments: int, horizon: int, seed: int, alpha: float
) -> None:
    adv = torch.randn(segments, horizon, generator=torch.Generator().manual_seed(seed))
    adv[::3] = 0.0  # zero rows give zero priority unless alpha is 0
    probs = priorities(adv, alpha)
    assert_relative_close(probs, segment_priorities_reference(adv, alpha))
    assert probs.sum().item() == pytest.approx(1.0, abs=1e-5)


def test_multithreaded_kernels_match_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real batches stay single-threaded below millions of elements; shrink the grain so the
    # OpenMP split (uneven on purpose: 1031 segments) is exercised here.
    monkeypatch.setattr(ops, "_ADVANTAGE_GRAIN", 1)
    monkeypatch.setattr(ops, "_PRIORITY_GRAIN", 1)
    threads = torch.get_num_threads()
    torch.set_num_threads(max(threads, 2))
    try:
        batch = random_advantage_batch(1031, 33, 12)
        args = (*batch, GAMMA, LAM, 1.2, 0.9)
        adv = advantage(*args)
        assert_relative_close(adv, puff_advantage_reference(*args))
        assert_relative_close(priorities(adv, 0.8), segment_priorities_reference(adv, 0.8))
    finally:
        torch.set_num_threads(threads)


def test_advantage_by_hand() -> None:
    # gamma = lam = 0.5, clips 1. Segment 0: no episode ends, fresh ratios, so
    #   A2 = 2 + 0.5*4 - 3 = 1;  A1 = (0 + 0.5*3 - 2) + 0.25*A2 = -0.25;  A0 = 1 + 0.25*A1.
    # Segment 1: truncation after row 2 (bootstrapped from its final value 4, the trace cut),
    # terminal after row 1, ratios 0.5 (clipped neither) and 2 (clipped to 1):
    #   A2 = 2 + 0.5*4 - 3 = 1;  A1 = 0.5*(0 - 2) = -1;  A0 = 0.5*(1 + 0.5*2 - 1) + 0.125*A1.
    # Segment 2: a truncation inside the segment, after row 0, with final value 5:
    #   A2 = 1;  A1 = -0.25 as in segment 0;  A0 = 1 + 0.5*5 - 1 = 2.5 (the trace is cut).
    values = torch.tensor([[1.0, 2.0, 3.0]] * 3)
    rewards = torch.tensor([[1.0, 0.0, 2.0]] * 3)
    terminals = torch.tensor([[False, False, False], [False, True, False], [False] * 3])
    truncations = torch.tensor([[False, False, False], [False, False, True], [True, False, False]])
    # Read only on truncated rows: the others hold values that would show if they were read.
    final_values = torch.tensor([[-50.0, -50.0, -50.0], [-50.0, -50.0, 4.0], [5.0, -50.0, -50.0]])
    ratio = torch.tensor([[1.0, 1.0, 1.0], [0.5, 0.5, 2.0], [1.0, 1.0, 1.0]])
    next_values = torch.tensor([4.0, 100.0, 4.0])  # segment 1's is unused: its last row truncated
    expected = torch.tensor([[0.9375, -0.25, 1.0], [0.375, -1.0, 1.0], [2.5, -0.25, 1.0]])
    args = (values, rewards, terminals, truncations, final_values, ratio, next_values)
    args = (*args, 0.5, 0.5, 1.0, 1.0)
    torch.testing.assert_close(advantage(*args), expected, rtol=0, atol=0)
    torch.testing.assert_close(puff_advantage_reference(*args), expected, rtol=0, atol=0)
    probs = priorities(expected, 1.0)
    torch.testing.assert_close(probs, torch.tensor([2.1875, 2.375, 3.75]) / 8.3125)


def test_truncated_rows_bootstrap_from_final_values_only() -> None:
    # Fresh random inputs with truncations inside segments: changing final_values off the
    # truncated rows changes nothing, changing V_t on a truncated row changes only its own TD
    # error's -V_t (not its bootstrap), and changing final_values on one changes the result.
    values, rewards, terminals, truncations, final_values, ratio, next_values = (
        random_advantage_batch(64, 16, 21)
    )
    inside = truncations[:, :-1] & ~terminals[:, :-1]
    assert inside.any(), "the draw must truncate some episode inside a segment"
    hyper = (GAMMA, LAM, 1.0, 1.0)

    def run(final: torch.Tensor) -> torch.Tensor:
        args = (values, rewards, terminals, truncations, final, ratio, next_values, *hyper)
        adv = advantage(*args)
        assert_relative_close(adv, puff_advantage_reference(*args))
        return adv

    base = run(final_values)
    elsewhere = torch.where(truncations, final_values, final_values + 100.0)
    torch.testing.assert_close(run(elsewhere), base, rtol=0, atol=0)
    moved = torch.where(truncations & ~terminals, final_values + 1.0, final_values)
    assert not torch.allclose(run(moved), base)
    # What the bootstrap adds on a truncated, non-terminal row t: rho_t * gamma * F_t.
    rows = truncations & ~terminals
    rho = ratio.clamp(max=1.0)
    torch.testing.assert_close((run(moved) - base)[rows], (rho * GAMMA)[rows])


def test_all_zero_advantages_give_uniform_priorities() -> None:
    probs = priorities(torch.zeros(8, 4), 0.8)
    torch.testing.assert_close(probs, torch.full((8,), 0.125))
    torch.testing.assert_close(segment_priorities_reference(torch.zeros(8, 4), 0.8), probs)


def test_non_contiguous_inputs() -> None:
    batch = random_advantage_batch(12, 10, 8)
    strided = tuple(x[::2] for x in batch)
    args = (*strided, GAMMA, LAM, 1.0, 1.0)
    assert_relative_close(advantage(*args), puff_advantage_reference(*args))
    assert_relative_close(
        priorities(batch[0][:, ::2], 0.8), segment_priorities_reference(batch[0][:, ::2], 0.8)
    )


def test_reference_runs_when_library_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulates a build without a library (PUFFER_CUDA=0 on a GPU machine): the op must quietly
    # use the reference.
    monkeypatch.setattr(_lib, "library", lambda device_type: None)
    batch = random_advantage_batch(9, 6, 9)
    args = (*batch, GAMMA, LAM, 1.0, 1.0)
    torch.testing.assert_close(advantage(*args), puff_advantage_reference(*args))
    adv = batch[0]
    torch.testing.assert_close(priorities(adv, 0.8), segment_priorities_reference(adv, 0.8))


def test_ops_pass_opcheck() -> None:
    batch = random_advantage_batch(32, 8, 11)
    torch.library.opcheck(advantage.default, (*batch, GAMMA, LAM, 1.0, 0.9))
    torch.library.opcheck(priorities.default, (batch[0], 0.8))
