"""The categorical sampling kernel against its torch reference, its edges and its errors."""

from __future__ import annotations

import pytest
import torch

from puffer.kernels import _lib
from puffer.kernels.sample import (
    categorical_sample,
    categorical_sample_available,
    categorical_sample_reference,
)

PAD = -1e9  # CategoricalHead's padding and illegal-choice logit

pytestmark = pytest.mark.skipif(_lib.library("cpu") is None, reason="CPU library not built")


def _ambiguous(logits: torch.Tensor, uniforms: torch.Tensor) -> torch.Tensor:
    """(..., K) True where u * sum(e) lies within float rounding of a running sum: there the
    kernel's float32 sums and the reference's may fall on different sides."""
    weights = (logits.double() - logits.double().amax(-1, keepdim=True)).exp()
    total = weights.sum(-1, keepdim=True)
    target = uniforms.double().unsqueeze(-1) * total
    return ((weights.cumsum(-1) - target).abs() <= 1e-5 * total).any(-1)


@pytest.mark.parametrize(
    ("rows", "branches", "width", "seed"),
    [(1, 1, 1, 0), (1024, 1, 3, 1), (333, 3, 5, 2), (64, 4, 18, 3), (5, 2, 2048, 4)],
)
def test_sample_matches_the_reference(rows: int, branches: int, width: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    logits = 3 * torch.randn(rows, branches, width, generator=generator)
    uniforms = torch.rand(rows, branches, generator=generator)
    actions, logprob = categorical_sample(logits, uniforms)
    expected_actions, expected_logprob = categorical_sample_reference(logits, uniforms)
    assert actions.shape == (rows, branches) and actions.dtype == torch.int64
    assert logprob.shape == (rows,) and logprob.dtype == torch.float32
    clear = ~_ambiguous(logits, uniforms)
    assert clear.float().mean() > 0.99
    assert torch.equal(actions[clear], expected_actions[clear])
    rows_clear = clear.all(-1)
    torch.testing.assert_close(
        logprob[rows_clear], expected_logprob[rows_clear], rtol=1e-5, atol=1e-5
    )


def test_sample_reads_rows_that_sit_apart_and_leading_dims() -> None:
    # The policy's logits are a slice of one product's output that also holds the value.
    generator = torch.Generator().manual_seed(5)
    out = torch.randn(6, 7, 2 * 3 + 1, generator=generator)
    logits = out[..., :6].view(6, 7, 2, 3)
    assert not logits.is_contiguous()
    uniforms = torch.rand(6, 7, 2, generator=generator)
    actions, logprob = categorical_sample(logits, uniforms)
    expected = categorical_sample(logits.contiguous(), uniforms)
    assert actions.shape == (6, 7, 2) and logprob.shape == (6, 7)
    assert torch.equal(actions, expected[0]) and torch.equal(logprob, expected[1])


def test_zero_probability_choices_are_never_drawn_even_at_the_uniforms_ends() -> None:
    logits = torch.tensor([[[PAD, 0.5, PAD, -1.0, PAD]]]).expand(5, 1, 5).contiguous()
    # 1.0 is past torch.rand's range; u * sum can round up to the sum the same way.
    uniforms = torch.tensor([[0.0], [0.3], [0.9999], [1.0 - 2.0**-24], [1.0]])
    actions, logprob = categorical_sample(logits, uniforms)
    assert actions[:, 0].tolist() == [1, 1, 3, 3, 3]
    legal = torch.log_softmax(torch.tensor([0.5, -1.0]), 0)
    torch.testing.assert_close(logprob, legal[[0, 0, 1, 1, 1]])


def test_draws_follow_the_softmax() -> None:
    # 200,000 draws of one row: each choice's frequency within 4.5 standard errors.
    draws = 200_000
    probs = torch.tensor([0.05, 0.6, 0.0, 0.35])
    logits = probs.clamp(min=1e-30).log().clamp(min=PAD).expand(draws, 1, 4)
    actions, _ = categorical_sample(logits, torch.rand(draws, 1, generator=torch.Generator()))
    freq = torch.bincount(actions[:, 0], minlength=4).double() / draws
    tolerance = 4.5 * (probs.double() * (1 - probs.double()) / draws).sqrt() + 1e-9
    assert ((freq - probs.double()).abs() <= tolerance).all(), freq


def test_nan_logits_give_a_nan_logprob_and_an_action_in_range() -> None:
    logits = torch.randn(3, 2, 4)
    logits[1, 0, 2] = float("nan")
    actions, logprob = categorical_sample(logits, torch.rand(3, 2))
    assert ((actions >= 0) & (actions < 4)).all()
    assert logprob.isnan().tolist() == [False, True, False]


def test_threads_do_not_change_the_draws() -> None:
    generator = torch.Generator().manual_seed(6)
    logits = torch.randn(40_000, 1, 3, generator=generator)
    uniforms = torch.rand(40_000, 1, generator=generator)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = categorical_sample(logits, uniforms)
        torch.set_num_threads(max(2, threads))
        several = categorical_sample(logits, uniforms)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one[0], several[0]) and torch.equal(one[1], several[1])


def test_bad_inputs_name_the_problem() -> None:
    logits = torch.randn(4, 1, 3)
    with pytest.raises(ValueError, match=r"uniforms .* expected float32 of shape \(4, 1\)"):
        categorical_sample(logits, torch.rand(4))
    with pytest.raises(ValueError, match=r"no kernel for torch\.float64"):
        categorical_sample(logits.double(), torch.rand(4, 1))
    assert not categorical_sample_available(torch.randn(2, 1, 4097))
    assert categorical_sample_available(torch.randn(2, 2, 2048))
