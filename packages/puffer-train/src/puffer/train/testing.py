"""Checks of the trainer's acting path shared by tests and benchmarks (not used in training).

`count_illegal_samples` plays real games with random legal moves and, at every position, draws
actions from an untrained policy through the trainer's own `Rollout`; it counts the draws that
the env's legal-action mask forbids, on rows that must act.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from puffer.train.config import PolicyConfig
from puffer.train.policies import make_policy
from puffer.train.rollout import Rollout

__all__ = ["count_illegal_samples"]


def count_illegal_samples(
    vecenv: Any, positions: int, draws: int, masked: bool = True, seed: int = 0
) -> tuple[int, int]:
    """(illegal, total) policy samples over `positions` replies of `vecenv`, `draws` each.

    Args:
        vecenv: an env with legal-action masks (`action_masks` not None); reset here.
        positions: replies (`recv()` calls) to sample at.
        draws: independent samples per acting row and reply.
        masked: False turns the mask path off (the policy ignores the masks), to show that
            the unmasked policy does sample illegal actions.
        seed: torch / numpy seed (policy init, sampling and the random moves played).

    Returns:
        (samples that the mask forbids, samples drawn), counted on acting rows only.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    policy = make_policy(PolicyConfig(hidden_size=32), vecenv)
    rollout = Rollout(policy, vecenv, action_masks=masked)
    rollout.reset(seed)
    illegal = total = 0
    for _ in range(positions):
        step = rollout.forward(rollout.recv())
        legal = np.array(vecenv.action_masks, copy=True)
        acting = np.asarray(step.masks, bool)
        # All draws in one batch: the rows repeated `draws` times.
        repeated = dataclasses.replace(
            step,
            params=step.params.repeat(draws, 1),
            action_masks=None if step.action_masks is None else step.action_masks.repeat(draws, 1),
        )
        action, _ = rollout.sample(repeated)
        chosen = np.tile(legal, (draws, 1))[np.arange(draws * len(legal)), action.numpy()]
        illegal += int((np.tile(acting, draws) & ~chosen).sum())
        total += int(acting.sum()) * draws
        # Play on with a random legal move per acting row (a sampled one could end the game).
        moves = np.array([rng.choice(np.flatnonzero(row)) if row.any() else 0 for row in legal])
        rollout.send(step, torch.from_numpy(moves))
    rollout.recv()  # leave the env ready for another reset
    return illegal, total
