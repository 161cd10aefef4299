"""oneDNN products: `linear` and `matmul` equal torch's (values and gradients) on random inputs,
and the library choice follows PUFFER_CPU_MATMUL."""

from __future__ import annotations

import pytest
import torch

from puffer.kernels import Linear, cpu_matmul_library, linear, lstm_cell_inference, matmul
from puffer.kernels.onednn import onednn_matmul_enabled, onednn_pays
from puffer.kernels.testing import assert_relative_close

onednn = pytest.mark.skipif(
    not (torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")),
    reason="this torch build has no oneDNN linear op",
)


@pytest.fixture
def library(monkeypatch):
    """Set PUFFER_CPU_MATMUL for one test: `library('onednn')`; the choice is re-read."""

    def use(name: str) -> None:
        monkeypatch.setenv("PUFFER_CPU_MATMUL", name)
        cpu_matmul_library.cache_clear()

    yield use
    cpu_matmul_library.cache_clear()


def _leaves(*shapes: tuple[int, ...], seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(shape, generator=g).requires_grad_() for shape in shapes]


def _onednn_calls(run) -> int:
    """How many oneDNN products `run()` made (profiled)."""
    # acc_events: torch 2.11's profiler otherwise warns that it clears events each cycle (an
    # error under the suite's filterwarnings); this profile has one cycle, so nothing changes.
    with torch.profiler.profile(acc_events=True) as profile:
        run()
    return sum(e.count for e in profile.key_averages() if "_linear_pointwise" in e.key)


def _assert_same_grads(got: torch.Tensor, expected: torch.Tensor, leaves, seed: int) -> None:
    """The gradients of both outputs under one random output gradient are relatively close."""
    grad_out = torch.randn(got.shape, generator=torch.Generator().manual_seed(seed + 1))
    got_grads = torch.autograd.grad(got, leaves, grad_out)
    expected_grads = torch.autograd.grad(expected, leaves, grad_out)
    for a, e in zip(got_grads, expected_grads, strict=True):
        assert_relative_close(a, e)


@onednn
@pytest.mark.parametrize(
    ("x_shape", "out_features", "bias"),
    [((300, 118), 128, True), ((16, 33, 128), 512, False), ((1, 7), 3, True)],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_linear_on_onednn_equals_torch(library, x_shape, out_features, bias, seed):
    library("onednn")
    x, w, *b = _leaves(
        x_shape, (out_features, x_shape[-1]), *([(out_features,)] if bias else []), seed=seed
    )
    got = linear(x, w, *b)
    expected = torch.nn.functional.linear(x, w, *b)
    assert got.shape == expected.shape
    assert_relative_close(got, expected)
    _assert_same_grads(got, expected, [x, w, *b], seed)


@onednn
def test_linear_on_onednn_takes_strided_views(library):
    library("onednn")
    x, w = _leaves((640, 300), (80, 96), seed=3)
    view, weight = x[:, ::3][:, :96], w  # a non-contiguous input
    got, expected = linear(view, weight), torch.nn.functional.linear(view, weight)
    assert_relative_close(got, expected)
    _assert_same_grads(got, expected, [x, w], 3)


@onednn
def test_large_products_run_on_onednn_and_small_ones_on_torch(library):
    library("onednn")
    assert onednn_pays(300, 118, 128) and onednn_pays(118, 300, 128)
    assert not onednn_pays(1024, 128, 4) and not onednn_pays(8, 128, 128)

    def onednn_calls(rows: int, out_features: int) -> int:
        x, w, b = _leaves((rows, 118), (out_features, 118), (out_features,), seed=0)
        return _onednn_calls(lambda: linear(x, w, b).sum().backward())

    assert onednn_calls(300, 128) == 3  # forward, input gradient, weight gradient
    assert onednn_calls(8, 128) == 0
    assert onednn_calls(300, 4) == 0


@onednn
@pytest.mark.parametrize("seed", [0, 1])
def test_matmul_on_onednn_equals_torch(library, seed):
    library("onednn")
    a, b = _leaves((600, 129), (129, 70), seed=seed)
    assert_relative_close(matmul(a, b), a @ b)
    assert_relative_close(matmul(a.T[:, ::2], a[::2]), a.T[:, ::2] @ a[::2])  # strided views
    _assert_same_grads(matmul(a, b), a @ b, [a, b], seed)


@onednn
def test_lstm_cell_inference_on_onednn_equals_torch(library):
    library("onednn")
    g = torch.Generator().manual_seed(5)
    x, h, c = (torch.randn(512, 64, generator=g) for _ in range(3))
    weights = [torch.randn(256, 64, generator=g) for _ in range(2)]
    biases = [torch.randn(256, generator=g) for _ in range(2)]
    with torch.no_grad():
        got = lstm_cell_inference(x, h, c, *weights, *biases)
        assert _onednn_calls(lambda: lstm_cell_inference(x, h, c, *weights, *biases)) > 0
    expected = torch.lstm_cell(x, (h, c), *weights, *biases)
    for a, e in zip(got, expected, strict=True):
        assert_relative_close(a, e)


@onednn
def test_mkl_and_other_dtypes_run_torchs_own_product(library):
    x, w = _leaves((300, 118), (128, 118), seed=0)  # large enough for oneDNN
    library("mkl")
    assert _onednn_calls(lambda: linear(x, w).sum().backward()) == 0
    library("onednn")
    x64, w64 = x.detach().double(), w.detach().double()
    assert _onednn_calls(lambda: linear(x64, w64)) == 0
    assert _onednn_calls(lambda: linear(x, w)) == 1


@onednn
def test_medium_precision_leaves_the_products_to_torch(library):
    library("onednn")
    x, w = _leaves((300, 118), (128, 118), seed=0)
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")
        assert not onednn_matmul_enabled(x, w)
        assert _onednn_calls(lambda: linear(x, w)) == 0
    finally:
        torch.set_float32_matmul_precision(before)
    assert onednn_matmul_enabled(x, w)
    assert _onednn_calls(lambda: linear(x, w)) == 1


def test_the_library_follows_the_environment(library, monkeypatch):
    library("mkl")
    assert cpu_matmul_library() == "mkl"
    library("MKL ")
    assert cpu_matmul_library() == "mkl"
    library("blas")
    with pytest.raises(
        ValueError, match="PUFFER_CPU_MATMUL is 'blas'; set it to 'onednn' or 'mkl'"
    ):
        cpu_matmul_library()
    monkeypatch.delenv("PUFFER_CPU_MATMUL")
    cpu_matmul_library.cache_clear()
    assert cpu_matmul_library() in ("onednn", "mkl")


def test_linear_module_shares_nn_linears_state_dict():
    torch.manual_seed(0)
    plain = torch.nn.Linear(6, 4)
    ours = Linear(6, 4)
    ours.load_state_dict(plain.state_dict())
    x = torch.randn(3, 6)
    assert_relative_close(ours(x), plain(x))
    assert isinstance(ours, torch.nn.Linear)
