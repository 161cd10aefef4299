"""The PPO update of one iteration, in the order of the equations (`Update`).

schedule: this iteration's learning rate and importance exponent beta
per minibatch:
  advantages: puff_advantage over the whole buffer (with the ratios and values that earlier
    minibatches left; computed once when `train.vtrace` and `train.refresh_values` are off)
  selection: priorities from them, a sampled minibatch, its importance weights and norms
  update: forward/backward passes over its microbatches, then one optimizer step
  (on CUDA with `train.update_graph`, these three replayed from one captured graph:
  `puffer.train.update_graph`)
logging: the iteration's mean loss statistics, explained variance, learning rate and beta
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

import torch
from torch import Tensor

from puffer.train import distributed
from puffer.train.advantage import puff_advantage, segment_priorities
from puffer.train.buffer import RolloutBuffer
from puffer.train.config import Sizes, TrainConfig
from puffer.train.optim import FlatOptimizer
from puffer.train.policies import Policy
from puffer.train.ppo import (
    LossCoefs,
    MinibatchNorms,
    MinibatchRows,
    annealed_beta,
    cosine_lr,
    fused_loss_applies,
    importance_weights,
    minibatch_loss,
    minibatch_norms,
)
from puffer.train.precision import compute, policy_outputs
from puffer.train.update_graph import GraphedUpdate

__all__ = ["CPU_MICROBATCH", "Minibatch", "Replay", "Update", "microbatch_segments"]

# Steps per forward/backward pass on the CPU when `train.microbatch_size` is 0: larger passes
# lose more to cache misses than they save in per-pass overhead (docs/results/train.md).
CPU_MICROBATCH = 8192


def microbatch_segments(cfg: TrainConfig, sizes: Sizes, device: torch.device) -> int:
    """Segments per forward/backward pass: `train.microbatch_size` steps (0: `CPU_MICROBATCH`
    on the CPU, the whole minibatch elsewhere), in whole segments, at most a minibatch."""
    whole = sizes.minibatch_segments
    steps = cfg.microbatch_size or (
        CPU_MICROBATCH if device.type == "cpu" else whole * sizes.horizon
    )
    return max(1, min(steps // sizes.horizon, whole))


@dataclass(frozen=True)
class Replay:
    """One iteration's buffer as its minibatches draw it.

    Attributes:
        rows: the buffer's filled segments as (S * T / span, span, ...) rows (views).
        span: steps per row: the horizon, or 1 with `train.sample_steps`.
        per_minibatch: rows per minibatch.
        per_pass: rows per forward/backward pass (a microbatch).
        value_masks: (rows, span) float32 ones for envs with legal-action masks, whose
            waiting rows train their value too; None elsewhere (the value follows the masks).
    """

    rows: RolloutBuffer
    span: int
    per_minibatch: int
    per_pass: int
    value_masks: Tensor | None

    def gather(self, part: Tensor, row_advantages: Tensor, weights: Tensor) -> MinibatchRows:
        """The stored rows `part` ((B,) int64) with their advantages (from `row_advantages`,
        (rows, span)) and importance `weights` (B, 1): what one loss pass reads."""
        rows = self.rows
        return MinibatchRows(
            actions=rows.actions[part],
            action_masks=None if rows.action_masks is None else rows.action_masks[part],
            logprobs=rows.logprobs[part],
            values=rows.values[part],
            advantages=row_advantages[part],
            weights=weights,
            masks=rows.masks[part],
            value_masks=None if self.value_masks is None else self.value_masks[part],
        )


@dataclass(frozen=True)
class Minibatch:
    """A sampled minibatch: `idx` (B,) int64 rows of `Replay.rows`, their importance `weights`
    (B, 1) float32, every row's advantages `row_advantages` (rows, span) float32 (each pass
    indexes its own) and the loss `norms` over the B rows."""

    idx: Tensor
    weights: Tensor
    row_advantages: Tensor
    norms: MinibatchNorms


class Update:
    """Trains `policy` on the iteration in `buffer`, one optimizer step per minibatch.

    Args:
        cfg: the run's `[train]` section.
        sizes: its derived sizes.
        policy: the policy, on `device`.
        optimizer: steps `policy`'s parameters, held in its flat buffers.
        buffer: the iteration's segments (`PuffeRL.collect` fills it); the update writes the
            ratios (with `train.vtrace`) and the values (with `train.refresh_values`) of the
            rows it trains.
        times: where the `forward`, `backward` and `optimizer` seconds accumulate (a
            replayed graph's minibatches are charged to none: their device time shows where
            the host next waits).
        device: the training device.
        graph: capture the minibatch update as a CUDA graph after the first iteration
            (`train.update_graph`); `graph_status` says whether it is used, or why not.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        sizes: Sizes,
        policy: Policy,
        optimizer: FlatOptimizer,
        buffer: RolloutBuffer,
        times: dict[str, float],
        device: torch.device,
        graph: bool = False,
    ):
        self.cfg, self.sizes, self.policy, self.optimizer = cfg, sizes, policy, optimizer
        self.buffer, self.times, self.device = buffer, times, device
        self.microbatch_segments = microbatch_segments(cfg, sizes, device)
        self.coefs = LossCoefs(cfg.clip_coef, cfg.vf_clip_coef, cfg.vf_coef, cfg.ent_coef)
        # Categorical policies on the CPU take the loss in one kernel pass (`minibatch_loss`);
        # False runs the torch graph (`ppo_loss` over the head's `logprob_entropy`), its reference.
        self.fused_loss = fused_loss_applies(policy.head, next(iter(policy.parameters())))
        self.graphed: GraphedUpdate | None = None
        self.graph_status = "off (update_graph=False)"
        self._capture = False
        if graph:
            reason = GraphedUpdate.unavailable(device)
            self._capture = reason is None
            self.graph_status = reason or "eager until captured after the first iteration"

    def __call__(self, iteration: int) -> dict[str, float]:
        """Run the update of iteration `iteration` (0-based).

        Returns:
            the iteration's mean loss statistics, `explained_variance`, `learning_rate` and
            `prio_beta`; a NaN or infinity in them means the update diverged.
        """
        beta = self.schedule(iteration)
        if self.graphed is not None:
            return self.iteration_losses(*self.graphed(beta), beta)
        if self._capture:
            # The first iteration runs eagerly on a side stream (what a capture cannot do, such
            # as cuBLAS's lazy set-up, happens there), the next is captured and replayed.
            stream = torch.cuda.Stream(self.device)
            stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(stream):
                losses, keys = self.eager(beta)
            torch.cuda.current_stream(self.device).wait_stream(stream)
            self._capture = False
            self.graphed, self.graph_status = GraphedUpdate.create(self, keys)
            return losses
        return self.eager(beta)[0]

    def eager(self, beta: float) -> tuple[dict[str, float], list[str]]:
        """The iteration's minibatches one kernel launch at a time; returns its losses (as
        `__call__`) and the keys of its statistics."""
        replay = self.replay()
        totals: dict[str, Tensor] = defaultdict(lambda: torch.zeros((), device=self.device))
        # Without V-trace or refreshed values nothing the advantages read changes this iteration.
        recompute = self.cfg.vtrace or self.cfg.refresh_values
        advantages = self.advantages()
        for minibatch_index in range(self.sizes.minibatches):
            if recompute and minibatch_index > 0:
                advantages = self.advantages()
            minibatch = self.select_minibatch(replay, advantages, beta)
            self.update_minibatch(replay, minibatch, totals)
        return self.iteration_losses(totals, advantages, beta), list(totals)

    def schedule(self, iteration: int) -> float:
        """Set the learning rate of `iteration` (cosine-annealed when `train.anneal_lr`);
        return its importance exponent beta (annealed from `train.prio_beta0` to 1)."""
        cfg, iterations = self.cfg, self.sizes.iterations
        lr = cosine_lr(cfg.learning_rate, iteration, iterations)
        for group in self.optimizer.param_groups:
            group["lr"] = lr if cfg.anneal_lr else cfg.learning_rate
        return annealed_beta(cfg.prio_beta0, iteration, iterations)

    def replay(self) -> Replay:
        """The buffer as the minibatches draw it, its ratios reset to 1 (fresh data)."""
        sizes, buf = self.sizes, self.buffer
        buf.ratio.fill_(1.0)
        # Minibatches draw rows of `span` steps: whole segments, or single steps (sample_steps),
        # through (S * T / span, span) views of the buffer; advantages run over whole segments.
        span = 1 if self.cfg.sample_steps else sizes.horizon
        rows = buf.rows(span)
        # Turn-based envs (those with legal-action masks): a row waiting for its turn is still
        # in the game, and segments that end on it bootstrap from its value, so its value is
        # trained too; only acting rows carry policy and entropy.
        value_masks = torch.ones_like(rows.masks) if buf.action_masks is not None else None
        return Replay(
            rows=rows,
            span=span,
            per_minibatch=sizes.minibatch_segments * sizes.horizon // span,
            per_pass=self.microbatch_segments * sizes.horizon // span,
            value_masks=value_masks,
        )

    def advantages(self) -> Tensor:
        """(S, T) float32 puff advantages of the filled segments, from the stored values and
        the ratios of the minibatches trained so far this iteration (all 1 without
        `train.vtrace`: plain GAE)."""
        cfg, buf, segments = self.cfg, self.buffer, self.sizes.segments
        return puff_advantage(
            buf.values[:segments],
            buf.rewards[:segments],
            buf.terminals[:segments],
            buf.truncations[:segments],
            buf.final_values[:segments],
            buf.ratio,
            buf.next_values[:segments],
            cfg.gamma,
            cfg.gae_lambda,
            cfg.vtrace_rho_clip,
            cfg.vtrace_c_clip,
        )

    def select_minibatch(
        self, replay: Replay, advantages: Tensor, beta: float | Tensor
    ) -> Minibatch:
        """Sample a minibatch of rows by priority (`segment_priorities`, exponent
        `train.prio_alpha`), without replacement, with its importance weights (exponent
        `beta`, a number or a 0-d tensor) and norms."""
        row_advantages = advantages.view(-1, replay.span)
        probs = segment_priorities(row_advantages, self.cfg.prio_alpha)
        idx = torch.multinomial(probs, replay.per_minibatch, replacement=False)
        norms = minibatch_norms(
            row_advantages[idx],
            replay.rows.masks[idx],
            None if replay.value_masks is None else replay.value_masks[idx],
        )
        weights = importance_weights(probs, idx, beta).unsqueeze(1)
        return Minibatch(idx, weights, row_advantages, norms)

    def update_minibatch(
        self, replay: Replay, minibatch: Minibatch, totals: dict[str, Tensor]
    ) -> None:
        """One optimizer step on `minibatch`, adding its loss statistics to `totals`.

        A minibatch larger than a microbatch runs in several forward/backward passes that
        share its norms, so their gradients sum to the minibatch's own.
        """
        self.optimizer.zero_grad()  # one fill of the flat gradient buffer
        parts = minibatch.idx.split(replay.per_pass)
        weights = minibatch.weights.split(replay.per_pass)
        for part, weight in zip(parts, weights, strict=True):
            self.backward_pass(replay, minibatch, part, weight, totals)
        tick = time.perf_counter()
        distributed.average_gradients(self.optimizer.flat.grad)
        grad_norm = self.optimizer.clip_grad_norm_(self.cfg.max_grad_norm)
        self.optimizer.step()
        self.times["optimizer"] += time.perf_counter() - tick
        totals["grad_norm"] += grad_norm.detach()

    def backward_pass(
        self,
        replay: Replay,
        minibatch: Minibatch,
        part: Tensor,
        weight: Tensor,
        totals: dict[str, Tensor],
    ) -> None:
        """Forward, loss and backward over the rows `part` (int64, one microbatch of
        `minibatch`) with their importance weights `weight` (B, 1); stores the rows' new
        ratios (with `train.vtrace`) and values (with `train.refresh_values`) and adds their
        statistics to `totals`.
        """
        rows, buf, clock = replay.rows, self.buffer, time.perf_counter
        tick = clock()
        # index_select copies whole rows (advanced indexing: element by element, 1.5x the
        # time for Ocean breakout's 30 KiB segments on CPU).
        with compute(self.cfg.precision, self.device):
            params, new_value = self.policy.forward_train(
                rows.observations.index_select(0, part),
                tuple(s[part] for s in buf.states),
                buf.starts(part) if self.policy.is_recurrent else None,
            )
        params, new_value = policy_outputs(params, new_value)
        loss, stats = minibatch_loss(
            self.policy.head,
            params,
            new_value,
            replay.gather(part, minibatch.row_advantages, weight),
            self.coefs,
            minibatch.norms,
            fused=self.fused_loss,
        )
        tock = clock()
        self.times["forward"] += tock - tick
        loss.backward()
        self.times["backward"] += clock() - tock
        ratio = stats.pop("ratio")
        if self.cfg.vtrace:
            rows.ratio[part] = ratio
        if self.cfg.refresh_values:
            rows.values[part] = new_value.detach()
        for key, value in stats.items():
            totals[key] += value

    def iteration_losses(
        self, totals: dict[str, Tensor], advantages: Tensor, beta: float
    ) -> dict[str, float]:
        """The loss statistics averaged over the iteration's minibatches, the explained variance
        of the last advantages' returns, the learning rate and beta."""
        values = self.buffer.values[: self.sizes.segments]
        with torch.no_grad():
            returns = advantages + values
            explained = 1 - (returns - values).var() / returns.var().clamp(min=1e-8)
        # Host-device sync: once per iteration, the loss statistics leave the device.
        minibatches = self.sizes.minibatches
        losses = {key: float(value) / minibatches for key, value in totals.items()}
        losses["explained_variance"] = float(explained)
        losses["learning_rate"] = self.optimizer.param_groups[0]["lr"]
        losses["prio_beta"] = beta
        return losses
