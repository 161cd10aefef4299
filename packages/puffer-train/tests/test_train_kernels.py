"""The public advantage functions: they call the puffer-kernels ops and refuse bad input."""

from __future__ import annotations

import pytest
import torch

from puffer.core.errors import APIUsageError
from puffer.kernels.testing import assert_relative_close, random_advantage_batch
from puffer.train.advantage import (
    puff_advantage,
    puff_advantage_reference,
    segment_priorities,
    segment_priorities_reference,
)

GAMMA, LAM = 0.995, 0.9


def test_public_functions_match_references() -> None:
    batch = random_advantage_batch(64, 16, 0)
    args = (*batch, GAMMA, LAM, 1.2, 0.9)
    adv = puff_advantage(*args)
    assert_relative_close(adv, puff_advantage_reference(*args))
    assert_relative_close(segment_priorities(adv, 0.8), segment_priorities_reference(adv, 0.8))


def test_float_flags_equal_bool_flags() -> None:
    values, rewards, terminals, truncations, final, ratio, next_values = random_advantage_batch(
        16, 8, 7
    )
    hyper = (GAMMA, LAM, 1.0, 1.0)
    as_bool = puff_advantage(
        values, rewards, terminals, truncations, final, ratio, next_values, *hyper
    )
    as_float = puff_advantage(
        values, rewards, terminals.float(), truncations.float(), final, ratio, next_values, *hyper
    )
    torch.testing.assert_close(as_bool, as_float, rtol=0, atol=0)


def test_results_carry_no_gradient() -> None:
    values, *rest = random_advantage_batch(4, 3, 1)
    adv = puff_advantage(values.requires_grad_(), *rest, GAMMA, LAM, 1.0, 1.0)
    assert not adv.requires_grad
    assert not segment_priorities(adv.requires_grad_(), 0.8).requires_grad


def test_bad_inputs_raise_with_the_fix() -> None:
    values, rewards, terminals, truncations, final, ratio, next_values = random_advantage_batch(
        4, 3, 10
    )
    hyper = (GAMMA, LAM, 1.0, 1.0)
    with pytest.raises(APIUsageError, match=r"rewards is a torch.float64 .* expected float32"):
        puff_advantage(
            values, rewards.double(), terminals, truncations, final, ratio, next_values, *hyper
        )
    with pytest.raises(APIUsageError, match=r"next_values .* shape \(3,\), expected .* \(4,\)"):
        puff_advantage(
            values, rewards, terminals, truncations, final, ratio, next_values[:3], *hyper
        )
    with pytest.raises(
        APIUsageError, match=r"terminals has dtype torch.int64, .*terminals\.bool\(\)"
    ):
        puff_advantage(
            values, rewards, terminals.long(), truncations, final, ratio, next_values, *hyper
        )
    with pytest.raises(APIUsageError, match=r"truncations has shape \(4, 2\), expected \(4, 3\)"):
        puff_advantage(
            values, rewards, terminals, truncations[:, :2], final, ratio, next_values, *hyper
        )
    with pytest.raises(APIUsageError, match=r"values has shape \(4,\), expected"):
        puff_advantage(
            next_values, rewards, terminals, truncations, final, ratio, next_values, *hyper
        )
    with pytest.raises(APIUsageError, match=r"values has shape \(4, 0\), .* horizon >= 1"):
        empty = values[:, :0]
        puff_advantage(empty, empty, empty, empty, empty, empty, next_values, *hyper)
    with pytest.raises(APIUsageError, match=r"final_values is a torch.float64 .* expected float32"):
        puff_advantage(
            values, rewards, terminals, truncations, final.double(), ratio, next_values, *hyper
        )
    with pytest.raises(APIUsageError, match=r"advantages is a torch.float16 tensor"):
        segment_priorities(values.half(), 0.8)
