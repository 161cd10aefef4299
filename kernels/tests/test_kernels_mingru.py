"""PufferNet's MinGRU layer (`mingru_scan`): kernel values and gradients equal the Python-loop
reference on fresh random inputs, with episode resets inside segments."""

from __future__ import annotations

import pytest
import torch

from puffer.kernels import (
    _lib,
    mingru_scan,
    mingru_scan_reference,
    mingru_step,
)
from puffer.kernels.testing import assert_relative_close


def _inputs(batch: int, steps: int, hidden: int, dtype: torch.dtype, seed: int):
    """Random pre-activations, inputs and states; resets at t = 0 (ignored), two in one row,
    at the last step, a row with none, and random ones elsewhere."""
    g = torch.Generator().manual_seed(seed)
    pre = torch.randn(batch, steps, 3 * hidden, generator=g, dtype=dtype) * 2
    x = torch.randn(batch, steps, hidden, generator=g, dtype=dtype)
    h0 = torch.rand(batch, hidden, generator=g, dtype=dtype)
    starts = torch.rand(batch, steps, generator=g) < 0.15
    starts[0, 0] = True
    starts[1, 2] = starts[1, steps // 2] = True
    starts[2, steps - 1] = True
    starts[3] = False
    return [pre, x, h0], starts


def _values_and_grads(leaves: list[torch.Tensor], starts: torch.Tensor, fn, seed: int):
    leaves = [t.detach().clone().requires_grad_() for t in leaves]
    y = fn(*leaves, starts)
    grad_y = torch.randn(y.shape, generator=torch.Generator().manual_seed(seed), dtype=y.dtype)
    return y.detach(), torch.autograd.grad(y, leaves, grad_y)


# hidden 20: 64-byte vectors of 16 floats (32-byte of 8) plus a scalar tail.
@pytest.mark.parametrize(("dtype", "tolerance"), [(torch.float64, 1e-12), (torch.float32, 1e-5)])
@pytest.mark.parametrize("seed", [0, 1])
def test_mingru_scan_matches_reference(dtype: torch.dtype, tolerance: float, seed: int) -> None:
    leaves, starts = _inputs(7, 33, 20, dtype, seed)
    y, grads = _values_and_grads(leaves, starts, mingru_scan, seed + 10)
    y_ref, grads_ref = _values_and_grads(leaves, starts, mingru_scan_reference, seed + 10)
    assert_relative_close(y, y_ref, tolerance)
    for got, want in zip(grads, grads_ref, strict=True):
        assert_relative_close(got, want, tolerance)


def test_mingru_scan_gradients_pass_gradcheck() -> None:
    # The reference itself against finite differences, so both rest on the equations.
    leaves, starts = _inputs(4, 6, 3, torch.float64, seed=2)
    leaves = [t.requires_grad_() for t in leaves]
    assert torch.autograd.gradcheck(lambda *a: mingru_scan(*a, starts), leaves)


def test_a_reset_cuts_the_state_and_its_gradient() -> None:
    leaves, _ = _inputs(4, 8, 5, torch.float64, seed=3)
    starts = torch.zeros(4, 8, dtype=torch.bool)
    starts[:, 5] = True
    leaves = [t.requires_grad_() for t in leaves]
    y = mingru_scan(*leaves, starts)
    (grad_h0,) = torch.autograd.grad(y[:, 5:].sum(), [leaves[2]])
    assert torch.count_nonzero(grad_h0) == 0  # after the cut, nothing depends on h0
    # From the cut on, the row equals a fresh row started from zeros at step 5.
    pre, x, _ = (t.detach() for t in leaves)
    fresh = mingru_scan(pre[:, 5:], x[:, 5:], torch.zeros(4, 5, dtype=torch.float64), starts[:, 5:])
    torch.testing.assert_close(y[:, 5:].detach(), fresh, rtol=0, atol=0)


def test_mingru_scan_reference_runs_without_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    leaves, starts = _inputs(4, 6, 8, torch.float32, seed=4)
    y_kernel, _ = _values_and_grads(leaves, starts, mingru_scan, 5)
    monkeypatch.setattr(_lib, "library", lambda device_type: None)
    y, _ = _values_and_grads(leaves, starts, mingru_scan, 5)
    assert_relative_close(y, y_kernel)
    half = [t.half() for t in leaves]  # no half kernel: the reference, on any build
    torch.testing.assert_close(mingru_scan(*half, starts), mingru_scan_reference(*half, starts))


def test_mingru_scan_op_passes_opcheck() -> None:
    leaves, starts = _inputs(4, 5, 6, torch.float64, seed=6)
    args = (*(t.requires_grad_() for t in leaves), starts)
    checks = ("test_schema", "test_autograd_registration", "test_faketensor")
    torch.library.opcheck(torch.ops.puffer.mingru_scan.default, args, test_utils=checks)


def test_threads_split_rows_without_changing_results() -> None:
    leaves, starts = _inputs(19, 9, 24, torch.float32, seed=7)
    results = []
    threads = torch.get_num_threads()
    for n in (1, 2):
        torch.set_num_threads(n)
        try:
            y, grads = _values_and_grads(leaves, starts, mingru_scan, 8)
            results.append([y, *grads])
        finally:
            torch.set_num_threads(threads)
    for one, two in zip(*results, strict=True):
        assert torch.equal(one, two)


def test_bad_inputs_raise_naming_the_tensor() -> None:
    (pre, x, h0), starts = _inputs(4, 5, 3, torch.float32, seed=9)
    with pytest.raises(ValueError, match=r"mingru_scan: pre has shape \(4, 5, 6\), expected"):
        mingru_scan(pre[..., :6], x, h0, starts)
    with pytest.raises(ValueError, match=r"h0 has shape \(3, 3\), expected \(4, 3\)"):
        mingru_scan(pre, x, h0[:3], starts)
    with pytest.raises(ValueError, match=r"one float dtype and device"):
        mingru_scan(pre.double(), x, h0, starts)
    with pytest.raises(ValueError, match=r"starts is torch.float32, expected torch.bool"):
        mingru_scan(pre, x, h0, starts.float())
    with pytest.raises(ValueError, match=r"x has shape \(5, 3\), expected \(B, T, H\)"):
        mingru_scan(pre[0], x[0], h0, starts)


def test_mingru_step_kernel_equals_its_torch_equations() -> None:
    (pre, x, h0), _ = _inputs(33, 4, 20, torch.float32, seed=13)
    pre, x = pre[:, 0], x[:, 0]
    with torch.no_grad():
        y, h = mingru_step(pre, x, h0)  # the kernel: no gradient needed
    leaves = [t.clone().requires_grad_() for t in (pre, x, h0)]
    y_ref, h_ref = mingru_step(*leaves)  # the torch equations: differentiable
    assert y_ref.requires_grad
    assert_relative_close(y, y_ref.detach())
    assert_relative_close(h, h_ref.detach())
    full = mingru_scan_reference(pre[:, None], x[:, None], h0, torch.zeros(33, 1, dtype=torch.bool))
    assert_relative_close(y, full[:, 0])
