"""Rollout storage: segments of `horizon` steps per agent, (segments, horizon, ...) on device.

Row t of a segment holds o_t, a_t, log pi_old(a_t | o_t), V(o_t), and r_{t+1}, d_{t+1}, u_{t+1}
(reward, termination, truncation) that came back for a_t, and on a truncated row V(final obs),
the value the truncated episode bootstraps from. `next_values[s]` is V of the observation after
segment s's last row, so the advantage bootstraps instead of cutting. `states`
hold the recurrent state at each segment start, so training replays the same sequence.

Agent a fills segments a, N + a, 2N + a, ... (`chunks` of them per iteration). One extra row
(index `segments`, the scratch row) absorbs the steps an agent takes after its segments are full,
which only happens with EnvPool-style async vecenvs whose blocks run ahead of others.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor

from puffer.train.config import Sizes

__all__ = ["PER_STEP", "Cursor", "ObservationWriter", "RolloutBuffer"]

Index = tuple[slice | Tensor, int | Tensor]
# The arrays the rollout writes one step (one t of many segments) at a time.
PER_STEP = (
    "actions",
    "logprobs",
    "values",
    "rewards",
    "terminals",
    "truncations",
    "final_values",
    "masks",
    "action_masks",
)


@dataclass
class RolloutBuffer:
    """Preallocated rollout tensors; every (S, T) array has one more (scratch) segment row.

    Attributes:
        observations: (S+1, T, *obs_shape), the env's observation dtype.
        actions: (S+1, T, *action_shape), int64 (categorical) or float32.
        logprobs, values, rewards, terminals, truncations, masks: (S+1, T) float32.
        final_values: (S+1, T) float32, V(final obs) on truncated rows (V_t there when the env
            keeps no final observation); what the advantage reads on those rows only.
        ratio: (S, T) float32, pi_new / pi_old per row, 1 when fresh.
        next_values: (S+1,) float32.
        states: tuple of (S+1, *state_shape) tensors, the state at each segment start.
        action_masks: (S+1, T, mask_width) bool legal-action masks of each row, or None when
            the env provides none.
    """

    observations: Tensor
    actions: Tensor
    logprobs: Tensor
    values: Tensor
    rewards: Tensor
    terminals: Tensor
    truncations: Tensor
    final_values: Tensor
    masks: Tensor
    ratio: Tensor
    next_values: Tensor
    states: tuple[Tensor, ...]
    action_masks: Tensor | None = None

    @classmethod
    def allocate(
        cls,
        sizes: Sizes,
        obs_shape: tuple[int, ...],
        obs_dtype: torch.dtype,
        action_shape: tuple[int, ...],
        action_dtype: torch.dtype,
        state: tuple[Tensor, ...],
        device: torch.device,
        mask_width: int | None = None,
    ) -> RolloutBuffer:
        """Zeroed storage for `sizes`; `state` is one agent-batched state to copy shapes from.

        `mask_width` also allocates `action_masks` (None: the env has no legal-action masks).
        """
        rows, steps = sizes.segments + 1, sizes.horizon

        def zeros(*shape: int, dtype: torch.dtype = torch.float32) -> Tensor:
            return torch.zeros(shape, dtype=dtype, device=device)

        return cls(
            observations=zeros(rows, steps, *obs_shape, dtype=obs_dtype),
            actions=zeros(rows, steps, *action_shape, dtype=action_dtype),
            logprobs=zeros(rows, steps),
            values=zeros(rows, steps),
            rewards=zeros(rows, steps),
            terminals=zeros(rows, steps),
            truncations=zeros(rows, steps),
            final_values=zeros(rows, steps),
            masks=zeros(rows, steps),
            ratio=torch.ones(rows - 1, steps, device=device),
            next_values=zeros(rows),
            states=tuple(zeros(rows, *s.shape[1:], dtype=s.dtype) for s in state),
            action_masks=None
            if mask_width is None
            else zeros(rows, steps, mask_width, dtype=torch.bool),
        )

    @property
    def segments(self) -> int:
        return self.ratio.shape[0]

    def time_major_twin(self) -> RolloutBuffer:
        """A buffer for the rollout to write into: its `PER_STEP` arrays are (S+1, T, ...) views
        of (T, S+1, ...) storage; observations, states and the rest are this buffer's own.

        A lockstep step writes one t of N segments: N elements T apart in a segment-major
        array, each in a cache line of its own, but one contiguous run in the twin.
        `copy_steps_from` moves the iteration here in one transposed copy per array.
        """
        arrays = {}
        for name in PER_STEP:
            array = getattr(self, name)
            if array is not None:
                storage = array.new_zeros((array.shape[1], array.shape[0], *array.shape[2:]))
                arrays[name] = storage.transpose(0, 1)
        return replace(self, **arrays)

    def copy_steps_from(self, twin: RolloutBuffer) -> None:
        """Copy `twin`'s `PER_STEP` arrays (a `time_major_twin`) into this buffer's."""
        for name in PER_STEP:
            array = getattr(self, name)
            if array is not None:
                array.copy_(getattr(twin, name))

    def rows(self, span: int) -> RolloutBuffer:
        """The filled segments (scratch row dropped) as rows of `span` steps: every (S, T, ...)
        array viewed as (S * T / span, span, ...); `span` divides T. Views, so writes (the
        ratio's) land in this buffer. `states` and `next_values` stay per segment, so a span
        other than T suits feedforward training only."""
        segments, horizon = self.ratio.shape
        if horizon % span:
            raise ValueError(f"RolloutBuffer.rows: span {span} does not divide horizon {horizon}")

        def view(array: Tensor | None) -> Tensor | None:
            if array is None:
                return None
            return array[:segments].view(segments * horizon // span, span, *array.shape[2:])

        arrays = {name: view(getattr(self, name)) for name in (*PER_STEP, "observations", "ratio")}
        return replace(self, **arrays)

    def starts(self, idx: Tensor) -> Tensor:
        """(B, T) bool for segments `idx`: True at t when row t - 1 ended an episode."""
        done = (self.terminals[idx] + self.truncations[idx]) > 0
        starts = torch.zeros_like(done)
        starts[:, 1:] = done[:, :-1]
        return starts


class ObservationWriter:
    """Writes each step's observations into `RolloutBuffer.observations`, a few steps at once.

    A lockstep step puts its N rows at one t of N segments, so they land `horizon` rows apart:
    with 472-byte rows (Ocean breakout) that is 1,024 scattered small writes, each a TLB and
    cache miss, about 4x the time of a contiguous copy. On the CPU, `group` consecutive
    lockstep steps are staged in a (group, N, *obs) block and written together, so each
    segment receives `group` adjacent rows in one run. Other steps (async envs, the scratch
    row, a group cut short) are written as they come. Call `flush` before reading the buffer.
    (The per-step scalars go through `RolloutBuffer.time_major_twin` instead. Observations stay
    segment-major because training gathers them segment by segment: from time-major storage
    that gather took twice as long, more than the contiguous writes saved.)

    Args:
        observations: the buffer's (S+1, T, *obs_shape) array.
        group: steps staged per write; 1 writes every step directly (the default off the CPU,
            and for rows of 4 KiB or more, which are contiguous runs already).
    """

    def __init__(self, observations: Tensor, group: int):
        row_bytes = observations[0, 0].numel() * observations.element_size()
        self.observations = observations
        self.group = group if row_bytes < 4096 else 1
        self._stage: Tensor | None = None
        self._rows: slice | None = None
        self._t0 = 0
        self._count = 0

    def store(self, index: Index, obs: Tensor) -> None:
        """Write `obs` ((len(rows), *obs_shape)) at `index` (a `Cursor.store_index` index)."""
        rows, t = index
        if self.group > 1 and isinstance(rows, slice):
            if self._count and rows == self._rows and t == self._t0 + self._count:
                self._stage[self._count] = obs
                self._count += 1
                if self._count == self.group:
                    self.flush()
                return
            self.flush()
            if t % self.group == 0:
                if self._stage is None or self._stage.shape[1] != obs.shape[0]:
                    self._stage = obs.new_empty((self.group, *obs.shape))
                self._stage[0] = obs
                self._rows, self._t0, self._count = rows, t, 1
                return
        self.flush()
        self.observations[index] = obs

    def flush(self) -> None:
        """Write the staged steps, if any."""
        if self._count:
            t0, count = self._t0, self._count
            self.observations[self._rows, t0 : t0 + count] = self._stage[:count].transpose(0, 1)
            self._count = 0


class Cursor:
    """Where each agent writes in the buffer; host-side numpy bookkeeping, no device syncs.

    Args:
        sizes: the run's derived sizes.
        device: where index tensors go for the general (async) path.
        blocks: the agents come in this many equal blocks of consecutive rows that each step
            in lockstep (`puffer.train.env_buffers`); a reply of one whole block, or of every
            agent, takes the fast path, whose indices are slices.
    """

    def __init__(self, sizes: Sizes, device: torch.device, blocks: int = 1):
        self.sizes = sizes
        self.device = device
        self.scratch = sizes.segments
        self.capacity = sizes.chunks * sizes.horizon
        n = sizes.num_agents
        self.blocks, self.block = blocks, n // blocks
        self.count = np.zeros(n, dtype=np.int64)
        self.finished = np.zeros(n, dtype=bool)
        self.prev_row = np.full(n, self.scratch, dtype=np.int64)
        self.prev_t = np.zeros(n, dtype=np.int64)
        self._all = np.arange(n)
        # The count every agent of each block has while they step together (lockstep), else
        # None: the fast path then needs no pass over the per-agent arrays to know it.
        self._common: list[int] | None = [0] * blocks
        self._all_finished = False  # finished.all(), kept so the lockstep path never scans

    def new_iteration(self) -> None:
        """Every agent starts filling its first segment again."""
        self.count[:] = 0
        self.finished[:] = False
        self.prev_row[:] = self.scratch
        self.prev_t[:] = 0
        self._common = [0] * self.blocks
        self._all_finished = False

    @property
    def done(self) -> bool:
        """True once every agent filled its segments and got the reply to its last action."""
        return self._all_finished

    def finished_rows(self, ids: np.ndarray) -> bool:
        """True when this reply is the last one of the iteration for `ids`: the iteration is
        done, or `ids` is a block that got the reply to its last action (it then waits,
        unsent, for the other blocks)."""
        return self._all_finished or (self.blocks > 1 and bool(self.finished[ids[0]]))

    def _lockstep(self, ids: np.ndarray) -> slice | None:
        """The rows `ids` stands for when it is every agent or one block, in step: the fast
        path. None otherwise (async replies, agents out of step)."""
        common, n = self._common, len(ids)
        if common is None:
            return None
        if n == self.sizes.num_agents:
            return slice(0, n) if min(common) == max(common) else None
        if self.blocks > 1 and n == self.block and int(ids[0]) % n == 0:
            return slice(int(ids[0]), int(ids[0]) + n)
        return None

    def reply_index(self, ids: np.ndarray) -> tuple[Index | None, Tensor | None]:
        """Index of the rows whose rewards/dones arrive now, and of the segments they close.

        Also marks agents whose last segment row just got its reply as finished.

        Returns:
            (row index for (S+1, T) arrays or None when no row waits for a reply, index into
            `next_values` of the segments that this step's values bootstrap, or None).
        """
        horizon = self.sizes.horizon
        agents = self._lockstep(ids)
        if agents is not None:
            if self._common[agents.start // self.block] == self.capacity:
                self.finished[agents] = True
                self._all_finished = bool(self.finished.all())
            start, t = int(self.prev_row[agents.start]), int(self.prev_t[agents.start])
            if start == self.scratch:  # the iteration's first step: no row waits
                return None, None
            n, closing = len(ids), None
            if t == horizon - 1:
                closing = torch.arange(start, start + n, device=self.device)
            return (slice(start, start + n), t), closing
        self.finished[ids] |= self.count[ids] == self.capacity
        self._all_finished = bool(self.finished.all())
        rows_np, t_np = self.prev_row[ids], self.prev_t[ids]
        if (rows_np == self.scratch).all():
            return None, None
        closing = np.where((t_np == horizon - 1) & (rows_np != self.scratch), rows_np, self.scratch)
        index = (self._tensor(rows_np), self._tensor(t_np))
        return index, self._tensor(closing)

    def store_index(self, ids: np.ndarray) -> tuple[Index, Tensor | bool]:
        """Index of the rows this step's observations and actions go to; advances the cursor.

        Returns:
            (row index, which of these rows open a segment: True for all, False for none, or a
            (len(ids),) bool tensor).
        """
        horizon, n = self.sizes.horizon, self.sizes.num_agents
        agents = self._lockstep(ids)
        if agents is not None and self._common[agents.start // self.block] < self.capacity:
            first, last = agents.start // self.block, agents.stop // self.block
            count = self._common[first]
            start, t = (count // horizon) * n + agents.start, count % horizon
            self.count[agents] += 1
            self._common[first:last] = [count + 1] * (last - first)
            self.prev_row[agents] = start + self._all[: len(ids)]
            self.prev_t[agents] = t
            return (slice(start, start + len(ids)), t), t == 0
        count = self.count[ids]
        live = count < self.capacity
        rows_np = np.where(live, (count // horizon) * n + ids, self.scratch)
        t_np = np.where(live, count % horizon, 0)
        self.count[ids] = count + live
        self.prev_row[ids], self.prev_t[ids] = rows_np, t_np
        common = self._common
        if not (common is not None and min(common) == self.capacity and len(ids) == n):
            self._common = None  # agents out of step until the next iteration
        return (self._tensor(rows_np), self._tensor(t_np)), self._tensor(live & (t_np == 0))

    def _tensor(self, array: np.ndarray) -> Tensor:
        return torch.from_numpy(np.ascontiguousarray(array)).to(self.device)
