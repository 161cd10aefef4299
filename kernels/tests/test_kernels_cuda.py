"""CUDA kernels: the sources compile with nvcc here; on a GPU they equal the torch references."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import torch

from puffer.kernels import (
    kernel_libraries,
    linear_scan,
    lstm_sequence,
    mingru_scan,
    puff_advantage_reference,
    segment_priorities_reference,
)
from puffer.kernels.testing import assert_relative_close, random_advantage_batch

CSRC = Path(__file__).resolve().parents[1] / "csrc"
GAMMA, LAM = 0.995, 0.9
puff_advantage = torch.ops.puffer.puff_advantage
segment_priorities = torch.ops.puffer.segment_priorities
NVCC = shutil.which("nvcc")

needs_gpu = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: CUDA kernels compile-checked only"
)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found: the build makes the CPU kernels only")
@pytest.mark.parametrize("source", ["kernels_cuda.cu", "sequence_cuda.cu", "mingru_cuda.cu"])
def test_cuda_sources_compile_for_sm80_and_sm90(tmp_path: Path, source: str) -> None:
    # Compiled directly, so the check holds whether or not this install was built with PUFFER_CUDA.
    result = subprocess.run(
        [
            NVCC,
            "-c",
            "-Xcompiler=-fPIC",
            '-DPUFFER_VERSION="test"',
            "-gencode=arch=compute_80,code=sm_80",
            "-gencode=arch=compute_90,code=sm_90",
            str(CSRC / source),
            "-o",
            str(tmp_path / "out.o"),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.o").stat().st_size > 0


def _cuda_library() -> None:
    if kernel_libraries()["cuda"] is None:
        pytest.skip("CUDA kernel library not built (no nvcc or PUFFER_CUDA=0): reference in use")


@needs_gpu
@pytest.mark.parametrize(("segments", "horizon", "seed"), [(1, 1, 0), (300, 64, 1), (16384, 64, 2)])
@pytest.mark.parametrize(("rho_clip", "c_clip"), [(1.0, 1.0), (1.5, 0.8)])
def test_cuda_advantage_matches_reference(
    segments: int, horizon: int, seed: int, rho_clip: float, c_clip: float
) -> None:
    _cuda_library()
    batch = random_advantage_batch(segments, horizon, seed, device="cuda")
    args = (*batch, GAMMA, LAM, rho_clip, c_clip)
    assert_relative_close(puff_advantage(*args), puff_advantage_reference(*args))
    cpu_args = (*(x.cpu() for x in batch), GAMMA, LAM, rho_clip, c_clip)
    assert_relative_close(puff_advantage(*args).cpu(), puff_advantage(*cpu_args))


@needs_gpu
@pytest.mark.parametrize("alpha", [0.0, 0.8])
@pytest.mark.parametrize(("segments", "horizon", "seed"), [(1, 1, 3), (300, 64, 4), (5000, 100, 5)])
def test_cuda_priorities_match_reference(
    segments: int, horizon: int, seed: int, alpha: float
) -> None:
    _cuda_library()
    adv = torch.randn(segments, horizon, generator=torch.Generator().manual_seed(seed)).cuda()
    adv[::3] = 0.0
    assert_relative_close(segment_priorities(adv, alpha), segment_priorities_reference(adv, alpha))
    zeros = torch.zeros(10, 4, device="cuda")
    torch.testing.assert_close(segment_priorities(zeros, alpha), torch.full_like(zeros[:, 0], 0.1))


@needs_gpu
def test_cuda_ops_pass_opcheck() -> None:
    _cuda_library()
    batch = random_advantage_batch(32, 8, 6, device="cuda")
    torch.library.opcheck(puff_advantage.default, (*batch, GAMMA, LAM, 1.0, 0.9))
    torch.library.opcheck(segment_priorities.default, (batch[0], 0.8))


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_sequences_match_cpu(dtype: torch.dtype) -> None:
    _cuda_library()
    g = torch.Generator().manual_seed(9)
    lstm = torch.nn.LSTM(32, 64, batch_first=True).to(dtype)
    x = torch.randn(16, 40, 32, generator=g, dtype=dtype)
    h0, c0 = torch.randn(2, 16, 64, generator=g, dtype=dtype)
    starts = torch.rand(16, 40, generator=g) < 0.1
    starts[1, 3] = starts[1, 20] = True
    leaves = [x, h0, c0, *(p.detach() for p in lstm.parameters())]
    decay = torch.rand(16, 40, 64, generator=g, dtype=dtype)
    results = []
    for device in ("cpu", "cuda"):
        inputs = [t.to(device).requires_grad_() for t in leaves]
        y = lstm_sequence(inputs[0], inputs[1], inputs[2], starts.to(device), *inputs[3:])
        grads = torch.autograd.grad(y, inputs, torch.ones_like(y))
        a = decay.to(device).requires_grad_()
        h = linear_scan(a, a.detach().clone(), inputs[1])
        results.append([y, *grads, h, *torch.autograd.grad(h.sum(), [a, inputs[1]])])
    for got, want in zip(results[1], results[0], strict=True):
        assert_relative_close(got.cpu(), want)


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_mingru_scan_matches_cpu(dtype: torch.dtype) -> None:
    _cuda_library()
    g = torch.Generator().manual_seed(10)
    pre = torch.randn(16, 40, 3 * 64, generator=g, dtype=dtype)
    x = torch.randn(16, 40, 64, generator=g, dtype=dtype)
    h0 = torch.rand(16, 64, generator=g, dtype=dtype)
    starts = torch.rand(16, 40, generator=g) < 0.1
    starts[1, 3] = starts[1, 20] = starts[2, 39] = True
    grad_y = torch.randn(16, 40, 64, generator=g, dtype=dtype)
    results = []
    for device in ("cpu", "cuda"):
        leaves = [t.to(device).requires_grad_() for t in (pre, x, h0)]
        y = mingru_scan(*leaves, starts.to(device))
        results.append([y, *torch.autograd.grad(y, leaves, grad_y.to(device))])
    for got, want in zip(results[1], results[0], strict=True):
        assert_relative_close(got.cpu().detach(), want.detach())
