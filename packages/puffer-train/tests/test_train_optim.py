"""BatchedMuon against torch.optim.Muon: the same update, step for step."""

from __future__ import annotations

import pytest
import torch

from puffer.train.optim import BatchedMuon, newton_schulz
from puffer.train.optim import _padding_batches as padding_batches

# Wide, tall and square matrices; an LSTM 128 policy's three; a small one beside a large one.
SHAPES = [(128, 118), (512, 128), (512, 128), (7, 30), (30, 7), (16, 16), (1, 9), (300, 64)]


def _params(shapes: list[tuple[int, int]], seed: int) -> list[torch.nn.Parameter]:
    generator = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(s, generator=generator)) for s in shapes]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_newton_schulz_equals_torch_muon_per_matrix(seed):
    # One step of torch's Muon with lr 1, no decay, no momentum: param - adjusted lr * NS(grad).
    params = _params(SHAPES, seed)
    grads = [torch.randn_like(p) * 10 ** (i % 3 - 1) for i, p in enumerate(params)]
    reference = torch.optim.Muon(
        [torch.nn.Parameter(torch.zeros_like(p)) for p in params],
        lr=1.0,
        weight_decay=0.0,
        momentum=0.0,
        nesterov=False,
        adjust_lr_fn="spectral_unclamped",
    )
    for p, g in zip(reference.param_groups[0]["params"], grads, strict=True):
        p.grad = g
    reference.step()
    got = newton_schulz(grads, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    for p, g, out in zip(reference.param_groups[0]["params"], grads, got, strict=True):
        assert out.shape == g.shape and out.dtype == torch.bfloat16
        # torch adds the update to the parameter at the adjusted learning rate.
        expected = torch.zeros_like(g).add_(out, alpha=-((g.shape[0] / g.shape[1]) ** 0.5))
        if g.shape in [(128, 118), (512, 128)]:  # an LSTM 128 policy's: bit-identical
            assert torch.equal(p.detach(), expected)
        else:
            # Padded into the small batch, the products' blocking may round differently: within
            # two bfloat16 steps (2^-7 relative) of the largest entry.
            assert torch.allclose(
                p.detach(), expected, rtol=0, atol=2**-6 * float(expected.abs().max())
            )


@pytest.mark.parametrize(
    "options",
    [
        dict(adjust_lr_fn="match_rms_adamw"),
        dict(adjust_lr_fn=None, nesterov=False),
        dict(adjust_lr_fn="original", weight_decay=0.0),
        dict(adjust_lr_fn="spectral_unclamped", momentum=0.5),
    ],
)
def test_batched_muon_steps_like_torch_muon(options):
    # An LSTM 128 policy's matrices (bit-identical), then two small ones padded into their batch,
    # where the products' blocking may round differently: within one bfloat16 step of the update.
    shapes = [(128, 118), (512, 128), (512, 128), (24, 40), (40, 24)]
    ours, theirs = _params(shapes, 0), _params(shapes, 0)
    options = {"lr": 0.02, "weight_decay": 0.1, **options}
    ours_opt, theirs_opt = BatchedMuon(ours, **options), torch.optim.Muon(theirs, **options)
    generator = torch.Generator().manual_seed(1)
    steps = 6
    for step in range(steps):
        grads = [torch.randn(s, generator=generator) for s in shapes]
        for i, (a, b, g) in enumerate(zip(ours, theirs, grads, strict=True)):
            # A parameter without a gradient this step is left alone by both.
            a.grad = b.grad = None if (step == 2 and i == 1) else g.clone()
        ours_opt.step()
        theirs_opt.step()
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert torch.equal(
            ours_opt.state[a]["momentum_buffer"], theirs_opt.state[b]["momentum_buffer"]
        )
        if i < 3:
            assert torch.equal(a, b)
        else:
            # Update entries are at most ~1: a bfloat16 rounding moves one by at most 2^-8.
            lr = options["lr"] * max(1.0, 0.2 * max(a.shape), (a.shape[0] / a.shape[1]) ** 0.5)
            assert torch.allclose(a, b, rtol=0, atol=steps * lr * 2**-8)


def test_batched_muon_resumes_torch_muon_state():
    """A checkpoint written with torch.optim.Muon's state resumes under BatchedMuon."""
    shapes = [(64, 32), (32, 64)]
    ours, theirs = _params(shapes, 3), _params(shapes, 3)
    theirs_opt = torch.optim.Muon(theirs, lr=0.05)
    for p in theirs:
        p.grad = torch.ones_like(p)
    theirs_opt.step()
    with torch.no_grad():
        for a, b in zip(ours, theirs, strict=True):
            a.copy_(b)
    ours_opt = BatchedMuon(ours, lr=0.05)
    ours_opt.load_state_dict(theirs_opt.state_dict())
    for a, b in zip(ours, theirs, strict=True):
        a.grad = b.grad = torch.full_like(a, -0.5)
    ours_opt.step()
    theirs_opt.step()
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)


def test_padding_batches_group_similar_sizes_only():
    lstm = [torch.empty(118, 128), torch.empty(128, 512), torch.empty(128, 512)]
    assert padding_batches(lstm) == [[0, 1, 2]]
    # Larger matrices batch by shape: padding would add arithmetic where it is the cost.
    mixed = [torch.empty(16, 16), torch.empty(512, 3136), torch.empty(512, 3136)]
    assert padding_batches(mixed) == [[0], [1, 2]]
