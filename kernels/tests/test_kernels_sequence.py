"""LSTM and linear scan with resets: kernel values and gradients equal the Python-loop references
(the MinGRU layer's own checks are in test_kernels_mingru.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from puffer.kernels import (
    _lib,
    cpu_vector_bits,
    linear_scan,
    linear_scan_reference,
    lstm_cell_inference,
    lstm_sequence,
    lstm_sequence_reference,
    mingru_scan,
)
from puffer.kernels.testing import assert_relative_close


def _starts(batch: int, steps: int, seed: int) -> torch.Tensor:
    """Random episode starts plus the edge cases: t = 0 (ignored), two in one row, the last step."""
    g = torch.Generator().manual_seed(seed)
    starts = torch.rand(batch, steps, generator=g) < 0.1
    starts[0, 0] = True
    starts[1, 2] = starts[1, steps // 2] = True
    starts[2, steps - 1] = True
    starts[3] = False  # a row with no reset at all
    return starts


def _lstm_inputs(batch: int, steps: int, inputs: int, hidden: int, dtype: torch.dtype, seed: int):
    return _lstm_leaves(batch, steps, inputs, hidden, dtype, seed), _starts(batch, steps, seed)


def _lstm_leaves(batch: int, steps: int, inputs: int, hidden: int, dtype: torch.dtype, seed: int):
    g = torch.Generator().manual_seed(seed)
    lstm = torch.nn.LSTM(inputs, hidden, batch_first=True).to(dtype)
    x = torch.randn(batch, steps, inputs, generator=g, dtype=dtype)
    h0 = 0.5 * torch.randn(batch, hidden, generator=g, dtype=dtype)
    c0 = 0.5 * torch.randn(batch, hidden, generator=g, dtype=dtype)
    return [t.requires_grad_() for t in (x, h0, c0, *(p.detach() for p in lstm.parameters()))]


def _values_and_grads(fn, leaves, starts, grad_seed: int):
    x, h0, c0, *weights = leaves
    y = fn(x, h0, c0, starts, *weights)
    grad_y = torch.randn(y.shape, generator=torch.Generator().manual_seed(grad_seed)).to(y)
    return y, torch.autograd.grad(y, leaves, grad_y)


# hidden 20: the CPU kernel's 8-wide vectors plus a scalar tail; 128: the policies' size.
@pytest.mark.parametrize(
    ("batch", "steps", "inputs", "hidden"), [(6, 17, 5, 20), (9, 64, 128, 128)]
)
def test_lstm_matches_reference_float64(batch: int, steps: int, inputs: int, hidden: int) -> None:
    leaves, starts = _lstm_inputs(batch, steps, inputs, hidden, torch.float64, seed=0)
    y, grads = _values_and_grads(lstm_sequence, leaves, starts, 1)
    y_ref, grads_ref = _values_and_grads(lstm_sequence_reference, leaves, starts, 1)
    assert_relative_close(y, y_ref, tolerance=1e-10)
    for got, want in zip(grads, grads_ref, strict=True):
        assert_relative_close(got, want, tolerance=1e-10)


@pytest.mark.parametrize(("batch", "steps"), [(1, 1), (4, 1), (3, 5)])
def test_lstm_gradients_at_the_edges(batch: int, steps: int) -> None:
    """One-step segments, and every step cut: no step reads a previous output."""
    leaves = _lstm_leaves(batch, steps, 3, 8, torch.float64, seed=5)
    starts = torch.ones(batch, steps, dtype=torch.bool)
    y, grads = _values_and_grads(lstm_sequence, leaves, starts, 6)
    y_ref, grads_ref = _values_and_grads(lstm_sequence_reference, leaves, starts, 6)
    assert_relative_close(y, y_ref, tolerance=1e-10)
    for got, want in zip(grads, grads_ref, strict=True):
        assert_relative_close(got, want, tolerance=1e-10)


def test_lstm_float32_matches_float64_reference() -> None:
    leaves, starts = _lstm_inputs(8, 48, 16, 32, torch.float64, seed=2)
    y_ref, grads_ref = _values_and_grads(lstm_sequence_reference, leaves, starts, 3)
    single = [t.detach().float().requires_grad_() for t in leaves]
    y, grads = _values_and_grads(lstm_sequence, single, starts, 3)
    assert_relative_close(y.double(), y_ref)
    for got, want in zip(grads, grads_ref, strict=True):
        assert_relative_close(got.double(), want)


def test_lstm_without_resets_equals_nn_lstm() -> None:
    torch.manual_seed(4)
    lstm = torch.nn.LSTM(6, 24, batch_first=True)
    x, h0, c0 = torch.randn(5, 10, 6), torch.randn(5, 24), torch.randn(5, 24)
    starts = torch.zeros(5, 10, dtype=torch.bool)
    y = lstm_sequence(x, h0, c0, starts, *lstm.parameters())
    assert_relative_close(y, lstm(x, (h0[None], c0[None]))[0])


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_linear_scan_matches_reference(dtype: torch.dtype) -> None:
    g = torch.Generator().manual_seed(5)
    a = torch.rand(7, 33, 12, generator=g, dtype=dtype)
    a[_starts(7, 33, 5)] = 0.0  # MinGRU's cut: the decay is zeroed where an episode began
    b = torch.randn(7, 33, 12, generator=g, dtype=dtype)
    h0 = torch.randn(7, 12, generator=g, dtype=dtype)
    leaves = [t.requires_grad_() for t in (a, b, h0)]
    h = linear_scan(*leaves)
    h_ref = linear_scan_reference(*leaves)
    grad_h = torch.randn(h.shape, generator=g, dtype=dtype)
    assert_relative_close(h, h_ref, tolerance=1e-10 if dtype == torch.float64 else 1e-5)
    grads = torch.autograd.grad(h, leaves, grad_h)
    for got, want in zip(grads, torch.autograd.grad(h_ref, leaves, grad_h), strict=True):
        assert_relative_close(got, want, tolerance=1e-10 if dtype == torch.float64 else 1e-5)


def test_reference_runs_without_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    leaves, starts = _lstm_inputs(4, 6, 3, 8, torch.float32, seed=6)
    y_kernel, _ = _values_and_grads(lstm_sequence, leaves, starts, 7)
    monkeypatch.setattr(_lib, "library", lambda device_type: None)
    y, _ = _values_and_grads(lstm_sequence, leaves, starts, 7)
    assert_relative_close(y, y_kernel)
    half = torch.rand(2, 3, 4).half()  # no half kernel: the reference, on any build
    torch.testing.assert_close(
        linear_scan(half, half, half[:, 0]), linear_scan_reference(half, half, half[:, 0])
    )


# test_aot_dispatch_dynamic reads .grad of a non-leaf output (c, gates are saved state, marked
# non-differentiable) and trips the warnings-as-errors filter; the other checks run.
OPCHECKS = ("test_schema", "test_autograd_registration", "test_faketensor")


def test_sequence_ops_pass_opcheck() -> None:
    leaves, starts = _lstm_inputs(4, 7, 3, 8, torch.float64, seed=8)
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = (t.detach() for t in leaves)
    xproj = torch.nn.functional.linear(x, w_ih).requires_grad_()
    bias = (b_ih + b_hh).requires_grad_()
    args = (xproj, w_hh.requires_grad_(), h0.requires_grad_(), c0.requires_grad_(), starts, bias)
    torch.library.opcheck(torch.ops.puffer.lstm_sequence.default, args, test_utils=OPCHECKS)
    a, b = torch.rand(3, 5, 4, dtype=torch.float64), torch.randn(3, 5, 4, dtype=torch.float64)
    h0 = torch.randn(3, 4, dtype=torch.float64)
    scan_args = tuple(t.requires_grad_() for t in (a, b, h0))
    torch.library.opcheck(torch.ops.puffer.linear_scan.default, scan_args, test_utils=OPCHECKS)


def test_threads_split_rows_without_changing_results() -> None:
    # 19 rows: three 8-row blocks, the last one short, spread over two OpenMP threads.
    leaves, starts = _lstm_inputs(19, 9, 4, 24, torch.float32, seed=9)
    x, h0, c0, w_ih, w_hh, b_ih, b_hh = (t.detach() for t in leaves)
    xproj, bias = torch.nn.functional.linear(x, w_ih), b_ih + b_hh
    grad_y = torch.randn(19, 9, 24)
    a, b = torch.rand(19, 9, 24), torch.randn(19, 9, 24)
    ops = torch.ops.puffer
    results = []
    threads = torch.get_num_threads()
    for n in (1, 2):
        torch.set_num_threads(n)
        try:
            y, c, gates = ops.lstm_sequence(xproj, w_hh, h0, c0, starts, bias)
            backward = ops.lstm_sequence_backward(w_hh, c0, starts, c, gates, grad_y)
            h = ops.linear_scan(a, b, h0)
            results.append([y, c, gates, *backward, h, *ops.linear_scan_backward(a, h0, h, h)])
        finally:
            torch.set_num_threads(threads)
    for one, two in zip(*results, strict=True):
        assert torch.equal(one, two)


def test_bad_inputs_raise_naming_the_tensor() -> None:
    (x, h0, c0, *weights), starts = _lstm_inputs(4, 5, 3, 8, torch.float32, seed=10)
    with pytest.raises(
        ValueError, match=r"lstm_sequence: h0 has shape \(3, 8\), expected \(4, 8\)"
    ):
        lstm_sequence(x, h0[:3], c0, starts, *weights)
    with pytest.raises(ValueError, match=r"starts has shape \(4, 4\), expected \(4, 5\)"):
        lstm_sequence(x, h0, c0, starts[:, :4], *weights)
    with pytest.raises(ValueError, match=r"one float dtype and device"):
        lstm_sequence(x.double(), h0, c0, starts, *weights)
    a = torch.rand(2, 3, 4)
    with pytest.raises(ValueError, match=r"linear_scan: h0 has shape \(2, 3\), expected \(2, 4\)"):
        linear_scan(a, a, a[:, 0, :3])
    with pytest.raises(
        ValueError, match=r"linear_scan: a has shape \(3, 4\), expected \(B, T, W\)"
    ):
        linear_scan(a[0], a[0], a[:, 0])


def test_a_reset_at_t0_changes_nothing() -> None:
    # starts[:, 0] is ignored: the stored segment-start state is already cut.
    leaves, starts = _lstm_inputs(5, 12, 4, 16, torch.float32, seed=11)
    starts[:, 0] = False
    y, grads = _values_and_grads(lstm_sequence, leaves, starts, 12)
    starts[:, 0] = True
    y_reset, grads_reset = _values_and_grads(lstm_sequence, leaves, starts, 12)
    assert torch.equal(y, y_reset)
    for got, want in zip(grads, grads_reset, strict=True):
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_lstm_cell_inference_matches_torch(dtype: torch.dtype) -> None:
    # hidden 20: vectors plus a scalar tail; the state rows differ so a row mix-up shows.
    g = torch.Generator().manual_seed(13)
    cell = torch.nn.LSTMCell(7, 20).to(dtype)
    x = torch.randn(9, 7, generator=g, dtype=dtype)
    h, c = torch.randn(2, 9, 20, generator=g, dtype=dtype)
    with torch.no_grad():
        got = lstm_cell_inference(x, h, c, *cell.parameters())
        want = cell(x, (h, c))
    for a, b in zip(got, want, strict=True):
        assert_relative_close(a, b, tolerance=1e-12 if dtype == torch.float64 else 1e-5)
    # With gradients wanted it is torch.lstm_cell itself, differentiable.
    h_grad, _ = lstm_cell_inference(x, h, c, *cell.parameters())
    assert h_grad.requires_grad
    assert_relative_close(h_grad.detach(), want[0])


# Run in a child process: the width is chosen once per process, from the CPU and this variable.
_AT_256_BITS = """
import sys, torch
from puffer.kernels import cpu_vector_bits
sys.path.insert(0, sys.argv[2])
from test_kernels_sequence import _width_outputs
assert cpu_vector_bits() == 256, cpu_vector_bits()
torch.save(_width_outputs(), sys.argv[1])
"""


def _width_outputs() -> list[torch.Tensor]:
    """Every CPU LSTM output at this process's width: forward, backward, the rollout cell; and
    the MinGRU layer's (`mingru_scan`, forward and backward). hidden 40: 64-byte vectors (16
    floats) plus a tail; 21 rows: 8-row blocks and a short one."""
    torch.manual_seed(14)  # nn.LSTM's initial weights come from the global generator
    leaves, starts = _lstm_inputs(21, 33, 12, 40, torch.float32, seed=14)
    y, grads = _values_and_grads(lstm_sequence, leaves, starts, 15)
    x, h0, c0, *weights = (t.detach() for t in leaves)
    with torch.no_grad():
        cell = lstm_cell_inference(x[:, 0], h0, c0, *weights)
    g = torch.Generator().manual_seed(16)
    pre = torch.randn(21, 33, 120, generator=g).requires_grad_()
    x_in = torch.randn(21, 33, 40, generator=g).requires_grad_()
    mingru = mingru_scan(pre, x_in, h0.requires_grad_(), starts)
    mingru_grads = torch.autograd.grad(mingru, (pre, x_in, h0), torch.ones_like(mingru))
    return [y.detach(), *grads, *cell, mingru.detach(), *mingru_grads]


@pytest.mark.skipif(
    cpu_vector_bits() != 512, reason="this CPU has no AVX-512: the kernels run at 256 bits only"
)
def test_avx512_and_avx2_widths_give_the_same_numbers(tmp_path) -> None:
    out = tmp_path / "w256.pt"
    env = {**os.environ, "PUFFER_KERNELS_VECTOR_BITS": "256"}
    here = os.path.dirname(__file__)
    subprocess.run([sys.executable, "-c", _AT_256_BITS, str(out), here], env=env, check=True)
    narrow = torch.load(out)
    wide = _width_outputs()
    for a, b in zip(wide, narrow, strict=True):
        assert_relative_close(a, b, tolerance=1e-6)
