"""Parameters and gradients in flat buffers (`FlatParameters`) and the optimizers over them
(`FlatMuon`, `FlatAdam`): the same steps as the per-tensor optimizers, bit for bit, no memory
allocated by an update after the first, and checkpoints in the per-tensor format."""

from __future__ import annotations

import pytest
import torch

from puffer.core import APIUsageError
from puffer.train.flat import ALIGN, FlatParameters
from puffer.train.optim import FlatAdam, FlatMuon, PufferMuon

# Every kind of parameter a policy has (wide, tall, square, stacked gates, a channels-last conv
# kernel, biases, one-element and odd-length vectors), at odd lengths so views start inside
# vector widths.
SHAPES = [(128, 118), (512, 128), (3, 128), (16, 16), (300, 64), (32, 4, 8, 8), (512,), (3,),
          (1,), (1, 128), (7,)]  # fmt: skip
MUON = [dict(momentum_rule="average"), dict(momentum_rule="sum", weight_decay=0.01)]
ADAM = dict(lr=1e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1, fused=True)


def _params(seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=generator)) for s in SHAPES]
    conv = params[5]
    conv.data = conv.data.contiguous(memory_format=torch.channels_last)
    return params


def _grads(generator: torch.Generator) -> list[torch.Tensor]:
    # Sizes spread over three decades, as a policy's layers' are.
    return [torch.randn(s, generator=generator) * 10 ** (i % 3 - 2) for i, s in enumerate(SHAPES)]


def _run_pair(reference, flat, ref_params, flat_params, steps: int = 4) -> None:
    """`steps` steps of both optimizers on the same fresh random gradients: the reference's
    set per tensor, the flat one's accumulated into its buffer as backward does."""
    generator = torch.Generator().manual_seed(11)
    for _ in range(steps):
        grads = _grads(generator)
        for p, g in zip(ref_params, grads, strict=True):
            p.grad = torch.empty_like(p).copy_(g)  # in the parameter's layout, as backward's
        flat.zero_grad()
        for p, g in zip(flat_params, grads, strict=True):
            p.grad.add_(g)
        reference.step()
        flat.step()


def _step_alone(optimizer, params, steps: int, seed: int) -> None:
    """`steps` steps of a per-tensor optimizer on fresh random gradients."""
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        for p, g in zip(params, _grads(generator), strict=True):
            p.grad = torch.empty_like(p).copy_(g)
        optimizer.step()


def test_flat_parameters_keep_values_and_take_backwards_gradients() -> None:
    layer = torch.nn.Linear(5, 3)
    before = [p.detach().clone() for p in layer.parameters()]
    flat = FlatParameters(list(layer.parameters()))
    assert flat.offsets == [0, ALIGN]  # the 15 weights, then the bias at the next multiple
    for p, b, view in zip(layer.parameters(), before, flat.views(flat.data), strict=True):
        assert torch.equal(p, b) and p.data_ptr() == view.data_ptr()
    for _ in range(2):  # backward accumulates into the flat buffer, in place
        layer(torch.ones(2, 5)).sum().backward()
    assert torch.equal(layer.bias.grad, torch.full((3,), 4.0))
    assert layer.bias.grad.data_ptr() == flat.view(flat.grad, 1).data_ptr()
    assert flat.grad[15:ALIGN].eq(0).all()  # the gap stays zero
    flat.check_bound("test")


def test_flat_parameters_refuse_what_one_buffer_cannot_hold() -> None:
    with pytest.raises(APIUsageError, match=r"torch.float32 on cpu, torch.float64 on cpu"):
        FlatParameters(
            [torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2).double())]
        )
    strided = torch.nn.Parameter(torch.zeros(4, 6)[:, ::2])
    with pytest.raises(APIUsageError, match=r"strides \(6, 2\); make it contiguous"):
        FlatParameters([strided])
    with pytest.raises(APIUsageError, match="no parameters"):
        FlatParameters([])


@pytest.mark.parametrize("kwargs", MUON)
def test_flat_muon_steps_as_per_tensor_muon_bit_for_bit(kwargs: dict) -> None:
    # Every kernel of the step is elementwise or runs on the same batched matrices, so the
    # flat buffers change nothing but where each element sits.
    ref_params, flat_params = _params(0), _params(0)
    reference = PufferMuon(ref_params, lr=0.05, momentum=0.8, **kwargs)
    flat = FlatMuon(flat_params, lr=0.05, momentum=0.8, **kwargs)
    _run_pair(reference, flat, ref_params, flat_params)
    for shape, a, b in zip(SHAPES, ref_params, flat_params, strict=True):
        assert torch.equal(a, b), shape
        assert torch.equal(reference.state[a]["momentum_buffer"], flat.state[b]["momentum_buffer"])


def test_flat_adam_steps_as_torch_fused_adam_up_to_its_tail_rounding() -> None:
    """Within float32 rounding, not bit for bit: torch's fused CPU kernel computes a tensor's
    last (numel mod vector width) elements in scalar code, whose multiply-adds round apart
    from its vector code's (seen in exp_avg_sq of the 7-element vector); in the flat buffer
    those elements sit in vector lanes. Elements that both compute in vector code agree
    exactly."""
    ref_params, flat_params = _params(1), _params(1)
    reference = torch.optim.Adam(ref_params, decoupled_weight_decay=True, **ADAM)
    flat = FlatAdam(flat_params, decoupled_weight_decay=True, **ADAM)
    _run_pair(reference, flat, ref_params, flat_params)
    for shape, a, b in zip(SHAPES, ref_params, flat_params, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=0, msg=str(shape))
        for key in ("step", "exp_avg", "exp_avg_sq"):
            want, got = reference.state[a][key], flat.state[b][key]
            torch.testing.assert_close(got, want, rtol=1e-6, atol=0, msg=f"{shape} {key}")
    wide = SHAPES.index((512, 128))  # 65,536 elements: no tail, every element in vector code
    assert torch.equal(ref_params[wide], flat_params[wide])


@pytest.mark.parametrize("max_norm", [0.5, 1e9])
def test_flat_clip_is_torchs_up_to_the_order_of_the_sum(max_norm: float) -> None:
    ref_params, flat_params = _params(2), _params(2)
    flat = FlatMuon(flat_params, lr=0.1)
    grads = _grads(torch.Generator().manual_seed(3))
    for a, b, g in zip(ref_params, flat_params, grads, strict=True):
        a.grad, _ = g.clone(), b.grad.copy_(g)
    want = torch.nn.utils.clip_grad_norm_(ref_params, max_norm)
    got = flat.clip_grad_norm_(max_norm)
    # torch sums each tensor's squares, then the norms' squares; the flat norm sums all
    # squares in one reduction: the same number up to float32 rounding of the order.
    torch.testing.assert_close(got, want, rtol=1e-6, atol=0)
    for a, b in zip(ref_params, flat_params, strict=True):
        torch.testing.assert_close(b.grad, a.grad, rtol=2e-6, atol=0)
        if max_norm > 1e6:
            assert torch.equal(b.grad, a.grad)  # a coefficient of exactly 1


def _allocated_bytes(fn) -> int:
    """CPU allocator bytes requested while `fn` runs (torch.profiler's memory events: every
    allocation of tensor memory, scratch inside a kernel included)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True) as prof:
        fn()
    return sum(e.self_cpu_memory_usage for e in prof.events() if e.self_cpu_memory_usage > 0)


@pytest.mark.parametrize("make", [
    lambda ps: FlatMuon(ps, lr=0.05, momentum=0.8, momentum_rule="sum", weight_decay=0.01),
    lambda ps: FlatMuon(ps, lr=0.05, momentum=0.8),
    lambda ps: FlatAdam(ps, decoupled_weight_decay=True, **ADAM),
])  # fmt: skip
def test_an_update_allocates_nothing_after_the_first(make) -> None:
    params = _params(4)
    optimizer = make(params)
    model = torch.nn.ParameterList(params)
    inputs = [torch.randn(s) for s in SHAPES]

    def update() -> None:
        optimizer.zero_grad()
        # The gradients' arrival (backward's in-place accumulation) is outside the update.
        with torch.no_grad():
            for p, x in zip(model, inputs, strict=True):
                p.grad.add_(x)
        optimizer.clip_grad_norm_(0.5)
        optimizer.step()

    update()
    buffers = [t for p in params for t in (p, p.grad)]
    buffers += [t for state in optimizer.state.values() for t in state.values()]
    pointers = [t.data_ptr() for t in buffers]
    before = [p.detach().clone() for p in params]
    assert _allocated_bytes(update) == 0
    assert [t.data_ptr() for t in buffers] == pointers  # everything stayed where it was
    assert not any(torch.equal(p, b) for p, b in zip(params, before, strict=True))  # it stepped
    # The check counts: the per-tensor optimizer allocates its updates each step.
    reference = PufferMuon(_params(4), lr=0.05)
    for p, x in zip(reference.param_groups[0]["params"], inputs, strict=True):
        p.grad = x.clone()
    assert _allocated_bytes(reference.step) > sum(x.numel() * 4 for x in inputs)


def test_a_per_tensor_muon_checkpoint_loads_into_flat_muon_and_back() -> None:
    """The checkpoint format is the per-tensor one: either optimizer loads the other's state
    and the two go on stepping alike."""
    ref_params, flat_params = _params(5), _params(5)
    reference = PufferMuon(ref_params, lr=0.05, momentum=0.8)
    _step_alone(reference, ref_params, steps=2, seed=12)
    flat = FlatMuon(flat_params, lr=0.05, momentum=0.8)
    with torch.no_grad():
        for a, b in zip(ref_params, flat_params, strict=True):
            b.copy_(a)
    saved = reference.state_dict()
    flat.load_state_dict(saved)
    assert flat.state_dict()["state"].keys() == saved["state"].keys()
    flat.flat.check_bound("test")
    assert flat.state[flat_params[0]]["momentum_buffer"].data_ptr() == flat.momentum.data_ptr()
    _run_pair(reference, flat, ref_params, flat_params, steps=2)
    assert all(torch.equal(a, b) for a, b in zip(ref_params, flat_params, strict=True))
    back = PufferMuon(_params(5), lr=0.05)
    back.load_state_dict(flat.state_dict())
    for a, b in zip(back.param_groups[0]["params"], flat_params, strict=True):
        assert torch.equal(back.state[a]["momentum_buffer"], flat.state[b]["momentum_buffer"])


def test_a_torch_adam_checkpoint_loads_into_flat_adam() -> None:
    ref_params, flat_params = _params(6), _params(6)
    reference = torch.optim.Adam(ref_params, decoupled_weight_decay=True, **ADAM)
    flat = FlatAdam(flat_params, decoupled_weight_decay=True, **ADAM)
    _step_alone(reference, ref_params, steps=1, seed=13)
    for a, b in zip(ref_params, flat_params, strict=True):
        b.data.copy_(a)
    flat.load_state_dict(reference.state_dict())
    assert float(flat.step_count) == 1.0
    _run_pair(reference, flat, ref_params, flat_params, steps=2)
    for a, b in zip(ref_params, flat_params, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=0)  # the tail rounding above
    uneven = reference.state_dict()
    uneven["state"][0]["step"] = torch.tensor(7.0)
    with pytest.raises(APIUsageError, match=r"step counts differ \(\[3.0, 7.0\]\)"):
        flat.load_state_dict(uneven)


def test_a_replaced_gradient_is_refused_not_skipped() -> None:
    params = _params(7)
    optimizer = FlatMuon(params, lr=0.1)
    with pytest.raises(APIUsageError, match=r"zero_grad\(set_to_none=True\)"):
        optimizer.zero_grad(set_to_none=True)
    params[3].grad = torch.ones(16, 16)
    with pytest.raises(APIUsageError, match=r"parameter 3 \(16, 16\) no longer lives in the flat"):
        optimizer.step()
    with pytest.raises(APIUsageError, match="2 parameter groups"):
        FlatMuon([{"params": params[:2]}, {"params": params[2:]}], lr=0.1)
    with pytest.raises(APIUsageError, match="FlatAdam: takes fused=True"):
        FlatAdam(params, lr=0.1)


needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA device: the flat update runs on the CPU here"
)


@needs_cuda
@pytest.mark.parametrize("make", [
    lambda ps: FlatMuon(ps, lr=0.05, momentum=0.8, momentum_rule="sum", weight_decay=0.01),
    lambda ps: FlatAdam(ps, decoupled_weight_decay=True, **ADAM),
])  # fmt: skip
def test_the_cuda_update_matches_the_cpus_and_allocates_nothing(make) -> None:
    cpu = _params(8)
    cuda = [torch.nn.Parameter(p.detach().cuda()) for p in cpu]
    optimizers = [make(cpu), make(cuda)]
    generator = torch.Generator().manual_seed(9)
    for step in range(3):
        grads = _grads(generator)
        on_device = [g.cuda() for g in grads]
        if step == 2:  # after two warm-up steps: the caching allocator hands out nothing new
            torch.cuda.synchronize()
            before = torch.cuda.memory_stats()["allocation.all.allocated"]
        for params, optimizer, gs in zip((cpu, cuda), optimizers, (grads, on_device), strict=True):
            optimizer.zero_grad()
            for p, g in zip(params, gs, strict=True):
                p.grad.add_(g)
            optimizer.clip_grad_norm_(0.5)
            optimizer.step()
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == before
    # Different kernels (cuBLAS, multi-tensor apply) round differently; Newton-Schulz
    # magnifies that in near-null directions, as between batched and single products.
    for a, b in zip(cpu, cuda, strict=True):
        torch.testing.assert_close(b.cpu(), a, rtol=0, atol=1e-4)
