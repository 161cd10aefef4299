"""PufferMuon's update rule, parameter kind by parameter kind, against the equations written out
one parameter at a time, and against heavyball's ForeachMuon (what PufferLib 3.0 runs)."""

from __future__ import annotations

import math

import pytest
import torch

from puffer.core import APIUsageError
from puffer.train import PolicyConfig, TrainConfig, make_policy
from puffer.train.optim import NS_SCHEDULE, PufferMuon, make_optimizer, newton_schulz

# One parameter of each kind a policy has: wide, tall and square matrices, an LSTM's stacked
# gates, a conv kernel (4-D), biases, a one-element value bias, a (1, n) value head.
SHAPES = [(128, 118), (512, 128), (3, 128), (16, 16), (300, 64), (32, 4, 8, 8), (512,), (3,),
          (1,), (1, 128)]  # fmt: skip


def _params(seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=generator)) for s in SHAPES]


def _orthogonalized(u: torch.Tensor) -> torch.Tensor:
    """Newton-Schulz of one matrix, as heavyball writes it: wide orientation, unit Frobenius
    norm, then X <- a X + (b A + c A A) X with A = X X^T for each (a, b, c)."""
    tall = u.size(0) > u.size(1)
    x = u.T if tall else u
    x = x / x.norm().clamp(min=1e-7)
    for a, b, c in NS_SCHEDULE:
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def _reference_step(params, grads, momenta, lr: float, beta: float, decay: float) -> None:
    """One step of the rule in PufferMuon's docstring, one parameter at a time."""
    with torch.no_grad():
        for p, g, m in zip(params, grads, momenta, strict=True):
            m.mul_(beta).add_((1 - beta) * g)
            u = g + m
            if u.ndim >= 2:
                flat = u.reshape(u.size(0), -1)
                rows, cols = flat.shape
                u = (_orthogonalized(flat) * math.sqrt(max(1, rows / cols))).view_as(p)
            p.mul_(1 - lr * decay).sub_(lr * u)


@pytest.mark.parametrize(("beta", "decay"), [(0.95, 0.0), (0.8946, 0.0), (0.5, 0.01)])
def test_puffer_muon_follows_its_equations_for_every_parameter_kind(beta, decay):
    ours, theirs = _params(0), _params(0)
    momenta = [torch.zeros_like(p) for p in theirs]
    optimizer = PufferMuon(ours, lr=0.044, momentum=beta, weight_decay=decay)
    generator = torch.Generator().manual_seed(1)
    for _ in range(5):
        grads = [
            torch.randn(s, generator=generator) * 10 ** (i % 3 - 2) for i, s in enumerate(SHAPES)
        ]
        for p, g in zip(ours, grads, strict=True):
            p.grad = g.clone()
        optimizer.step()
        _reference_step(theirs, grads, momenta, 0.044, beta, decay)
    for shape, a, b, m in zip(SHAPES, ours, theirs, momenta, strict=True):
        momentum = optimizer.state[a]["momentum_buffer"]
        assert float((momentum - m).abs().max()) <= 1e-6 * float(m.abs().max()), shape
        # Batched float32 products round differently from one-matrix ones; the iteration
        # magnifies that (a step moves a matrix entry by about lr / sqrt(cols)).
        assert torch.allclose(a, b, rtol=0, atol=1e-5), (shape, float((a - b).abs().max()))


def test_puffer_muon_steps_vectors_as_momentum_sgd_at_the_raw_learning_rate():
    """A vector's step is lr * (g + m): no normalization, no AdamW-style rescaling."""
    bias = torch.nn.Parameter(torch.zeros(4))
    optimizer = PufferMuon([bias], lr=0.5, momentum=0.9)
    bias.grad = torch.tensor([1.0, -2.0, 0.0, 4.0])
    optimizer.step()
    # m = 0.1 g, u = 1.1 g, p = -0.5 * 1.1 g
    assert torch.allclose(bias.detach(), -0.55 * torch.tensor([1.0, -2.0, 0.0, 4.0]))


def test_puffer_muon_sum_rule_is_pufferlib4s_classic_nesterov():
    """momentum_rule 'sum': m <- beta m + g, step lr * (g + beta m), over three steps."""
    bias = torch.nn.Parameter(torch.zeros(3))
    optimizer = PufferMuon([bias], lr=0.5, momentum=0.7, momentum_rule="sum")
    grads = [torch.tensor([1.0, -2.0, 3.0]), torch.tensor([0.5, 0.0, -1.0]), torch.ones(3)]
    m, expected = torch.zeros(3), torch.zeros(3)
    for g in grads:
        bias.grad = g.clone()
        optimizer.step()
        m = 0.7 * m + g
        expected = expected - 0.5 * (g + 0.7 * m)
    torch.testing.assert_close(bias.detach(), expected)
    torch.testing.assert_close(optimizer.state[bias]["momentum_buffer"], m)
    with pytest.raises(APIUsageError, match="momentum_rule is 'lerp'"):
        PufferMuon([bias], lr=0.1, momentum_rule="lerp")


def test_puffer_muon_matrix_steps_are_orthogonal_at_unit_scale():
    """A matrix's step has every singular value near lr * sqrt(max(1, rows / cols)), whatever
    its gradient's size: Newton-Schulz at heavyball's schedule maps singular values into about
    [0.7, 1.2]."""
    for shape in [(512, 128), (128, 118), (3, 128)]:
        weight = torch.nn.Parameter(torch.zeros(shape))
        optimizer = PufferMuon([weight], lr=1.0, momentum=0.0)
        weight.grad = torch.randn(shape) * 1e-4
        optimizer.step()
        scale = math.sqrt(max(1, shape[0] / shape[1]))
        singular = torch.linalg.svdvals(-weight.detach()) / scale
        assert 0.6 < float(singular.min()) and float(singular.max()) < 1.3, (shape, singular)


def test_puffer_muon_leaves_parameters_without_gradients_alone():
    params = _params(2)
    before = [p.detach().clone() for p in params]
    optimizer = PufferMuon(params, lr=0.1)
    params[0].grad = torch.ones_like(params[0])
    optimizer.step()
    assert not torch.equal(params[0], before[0])
    assert all(torch.equal(p, b) for p, b in zip(params[1:], before[1:], strict=True))


def test_newton_schulz_batches_like_one_matrix_at_a_time():
    """Padded into one batch, small matrices of different shapes come out as they would alone."""
    generator = torch.Generator().manual_seed(3)
    matrices = [torch.randn(s, generator=generator) for s in [(7, 30), (30, 7), (16, 16), (1, 9)]]
    batched = newton_schulz(matrices)
    for matrix, out in zip(matrices, batched, strict=True):
        assert out.shape == matrix.shape and out.dtype == torch.float32
        assert torch.allclose(out, newton_schulz([matrix])[0], rtol=0, atol=1e-5)


def test_float64_parameters_step_in_float64():
    """In float64 the iteration runs in float64 (the parity harness compares optimizers there):
    the same rule as float32, closer to the exact one by far more than float32's rounding."""
    params = _params(6)
    exact = [p.detach().double().clone() for p in params]
    doubles = [torch.nn.Parameter(p.detach().double().clone()) for p in params]
    grads = [torch.randn(s, generator=torch.Generator().manual_seed(7)) for s in SHAPES]
    _reference_step(exact, [g.double() for g in grads], [torch.zeros_like(e) for e in exact],
                    0.044, 0.8946, 0.0)  # fmt: skip
    for opt_params in (params, doubles):
        for p, g in zip(opt_params, grads, strict=True):
            p.grad = g.to(p.dtype)
        PufferMuon(opt_params, lr=0.044, momentum=0.8946).step()
    for p, d, e in zip(params, doubles, exact, strict=True):
        assert d.dtype == torch.float64
        assert float((d.detach() - e).abs().max()) < 1e-12
        assert float((p.detach().double() - e).abs().max()) > 1e-9 or p.ndim < 2


def test_puffer_muon_matches_heavyball_foreach_muon():
    """PufferLib 3.0's optimizer, heavyball's ForeachMuon at its arguments there (betas from
    adam_beta1/adam_beta2, eps from adam_eps, which its Muon does not read), steps the same."""
    # Not a workspace dependency (its metadata would hold numpy below 2 for everyone):
    # `uv run --with heavyball==2.2.1 pytest packages/puffer-train/tests/test_train_optim.py`.
    heavyball = pytest.importorskip(
        "heavyball", reason="heavyball 2.2.1 (PufferLib 3.0's optimizer) is not installed"
    )
    heavyball.utils.compile_mode = None  # as PufferLib sets it when not compiling
    ours, theirs = _params(4), _params(4)
    optimizer = PufferMuon(ours, lr=0.044, momentum=0.8946)
    reference = heavyball.ForeachMuon(theirs, lr=0.044, betas=(0.8946, 0.9), eps=1e-4)
    generator = torch.Generator().manual_seed(5)
    for _ in range(4):
        grads = [torch.randn(s, generator=generator) for s in SHAPES]
        for a, b, g in zip(ours, theirs, grads, strict=True):
            a.grad, b.grad = g.clone(), g.clone()
        optimizer.step()
        reference.step()
    for shape, a, b in zip(SHAPES, ours, theirs, strict=True):
        assert torch.allclose(a, b, rtol=0, atol=2e-6), (shape, float((a - b).abs().max()))


def test_make_optimizer_puts_every_parameter_under_the_named_rule():
    from puffer.core import make

    env = make("breakout", num_envs=2)
    policy = make_policy(PolicyConfig(recurrent="lstm"), env)
    env.close()
    muon = make_optimizer(policy, TrainConfig(learning_rate=0.03, muon_momentum=0.9))
    assert isinstance(muon, PufferMuon)
    (group,) = muon.param_groups
    assert len(group["params"]) == len(list(policy.parameters()))
    assert group["lr"] == 0.03 and group["momentum"] == 0.9
    adam = make_optimizer(policy, TrainConfig(optimizer="adam", weight_decay=0.1))
    assert isinstance(adam, torch.optim.Adam) and adam.param_groups[0]["decoupled_weight_decay"]
