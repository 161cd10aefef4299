"""Acting in a vecenv with a policy: the one rollout path of the trainer, `evaluate_episodes`
and `puffer eval`.

One step, as `Rollout` runs it:

    vecenv.recv() -> Step: observations, rewards, flags to the device (zero-copy views on CPU,
      through pinned host memory to CUDA); the final observations of truncated rows (only
      when some row was truncated and the env writes them)
    forward(step):  gather the rows' recurrent state, cut it where this reply ended an episode
      (multiply by 1 - done), policy.forward_eval -> params, value, next state; V(final obs)
      of truncated rows from their uncut state
    sample(step):   action, log-prob from the action head (illegal actions excluded when the
      env provides legal-action masks; rows that must act with no legal action are refused)
    send(step, a):  scatter the next state back to the rows; Box actions: where every bound is
      finite and the policy's `box_actions` is "map" (the default), the policy acts in
      [-1, 1], clipped there and mapped onto [low, high] (so a unit Gaussian explores the
      whole range whatever its units), else clipped to the bounds; cast to the buffer dtype
      (int32 / float32), host copy, vecenv.send()

The policy's own action (unclipped, unscaled) is what the trainer stores; only the env sees
the mapped one. `hold(step)` keeps a reply unsent (the trainer's iteration boundary: the next
iteration acts on it with the updated policy; with `EnvBuffers` each buffer's last reply is
held, and they are acted on as one step of every agent); `held_state()` / `load_held_state()`
carry it through a checkpoint.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor

from puffer.core import APIUsageError, action_dtype
from puffer.train.graphs import GraphedForward
from puffer.train.policies import Policy
from puffer.train.precision import compute, policy_outputs

__all__ = ["Rollout", "Step"]

_NO_ROWS = np.zeros(0, dtype=np.int64)


@dataclass
class Step:
    """One `recv()` from the vecenv, on the policy's device, and what the policy made of it.

    Attributes:
        obs: (B, *obs_shape) observations in the env's dtype. On CPU a zero-copy view of the
            env's array: valid until the next `send`.
        rewards: (B,) float32, for the action each row took last.
        terminals: (B,) bool.
        truncations: (B,) bool.
        masks: (B,) bool; False for rows that are padding or must not act this step.
        action_masks: (B, sum of discrete action sizes) bool legal-action masks, or None when
            the env provides none (the unmasked path).
        ids: (B,) int agent rows (numpy, host).
        infos: finished-episode stat dicts that came with this reply.
        state: the rows' recurrent state after the episode cut (set by `Rollout.forward`).
        params: action-head parameters (set by `Rollout.forward`; None until then).
        value: (B,) float32 V(obs) (set by `Rollout.forward`).
        next_state: the recurrent state after this step (set by `Rollout.forward`).
        final_rows: (K,) int64 host indices of the rows truncated (and not terminal) in this
            reply whose final observation the env kept; empty otherwise.
        final_obs: (K, *obs_shape) those final observations on the device, or None.
        final_values: (B,) float32 V(final obs) on `final_rows`, 0 elsewhere (set by
            `Rollout.forward`); None when no row was truncated.
    """

    obs: Tensor
    rewards: Tensor
    terminals: Tensor
    truncations: Tensor
    masks: Tensor
    ids: np.ndarray
    infos: list[dict[str, Any]]
    action_masks: Tensor | None = None
    state: tuple[Tensor, ...] = ()
    params: Tensor | None = None
    value: Tensor | None = None
    next_state: tuple[Tensor, ...] = ()
    final_rows: np.ndarray = field(default_factory=lambda: _NO_ROWS)
    final_obs: Tensor | None = None
    final_values: Tensor | None = None


class Rollout:
    """Runs `policy` in `vecenv`: observation transfer, recurrent state, sampling, actions.

    Args:
        policy: acts on the device its parameters live on.
        vecenv: the async API (`async_reset`, `send`, `recv`, `num_agents`, the single spaces);
            not closed here.
        times: a dict to add seconds spent in the env ("env") and the rest of acting (policy,
            sampling, state, transfers: "rollout") to.
        cuda_graphs: on a CUDA device, replay the forward of full replies from a CUDA graph
            (`puffer.train.graphs`): every agent, or one `EnvBuffers` buffer's agents, the
            graph then serving each buffer in turn; `graph_status` says whether it is used,
            or why not.
        learn: merge each reply's observations into the policy's running statistics
            (`Policy.observe`) before acting on them; the trainer's rollout does, evaluation
            does not.
        precision: what the policy computes in (`train.precision`, `puffer.train.precision`);
            the step's params and value come out float32 either way.
        action_masks: sample only legal actions where the env provides masks
            (`train.action_masks`); False samples from every action and leaves an illegal one
            to the env's rules.

    Example:
        >>> from puffer.core import make
        >>> from puffer.train import PolicyConfig, make_policy
        >>> env = make("squared", num_envs=2)
        >>> rollout = Rollout(make_policy(PolicyConfig(hidden_size=8), env), env)
        >>> rollout.reset(seed=0)
        >>> step = rollout.forward(rollout.recv())
        >>> action, logprob = rollout.sample(step)
        >>> rollout.send(step, action); action.shape, rollout.recv().obs.shape[0]
        (torch.Size([2]), 2)
        >>> env.close()
    """

    def __init__(
        self,
        policy: Policy,
        vecenv: Any,
        times: dict[str, float] | None = None,
        cuda_graphs: bool = False,
        learn: bool = False,
        precision: str = "float32",
        action_masks: bool = True,
    ):
        self.policy = policy
        self.learn, self.precision = learn, precision
        self.vecenv = vecenv
        self.device = next(policy.parameters()).device
        self.num_agents = int(vecenv.num_agents)
        self.times: dict[str, float] = times if times is not None else defaultdict(float)
        space = vecenv.single_action_space
        self.action_dtype = torch.from_numpy(np.zeros(0, dtype=action_dtype(space))).dtype
        self.action_bounds = _box_bounds(space, self.device)
        self.rescale_actions = (
            self.action_bounds is not None
            and policy.box_actions == "map"
            and bool(np.isfinite(space.low).all() and np.isfinite(space.high).all())
        )
        self.state = policy.initial_state(self.num_agents, self.device)
        # The mask path is on only when the env provides legal-action masks.
        self.masked = action_masks and getattr(vecenv, "action_masks", None) is not None
        self._nvec = _branch_sizes(space) if self.masked else None
        self._held: list[Step] = []
        self._pinned: dict[tuple[str, int], Tensor] = {}
        self._graph: GraphedForward | None = None
        # The rows of a full reply: all agents, or one buffer's (EnvBuffers' lockstep blocks).
        self.full_reply = self.num_agents // getattr(vecenv, "num_buffers", 1)
        # Why the forward is (not) replayed from a CUDA graph; captured on the first full reply.
        self.graph_status = "off (cuda_graphs=False)"
        if cuda_graphs:
            self.graph_status = GraphedForward.unavailable(self.device) or "pending"

    def reset(self, seed: int | None) -> None:
        """Start a reset of every env with `seed`; zero the recurrent state, drop a held step."""
        self.vecenv.async_reset(seed)
        self.state = self.policy.initial_state(self.num_agents, self.device)
        self._held = []

    def zero_state(self) -> None:
        """Zero every row's recurrent state in place (a held step then acts from zeros)."""
        for s in self.state:
            s.zero_()

    def recv(self) -> Step:
        """Block for the next reply and move it to the device (blocks on the env)."""
        start = time.perf_counter()
        obs, rewards, terminals, truncations, infos, ids, masks = self.vecenv.recv()
        self.times["env"] += time.perf_counter() - start
        ids = np.asarray(ids)
        first = int(ids[0])
        action_masks = None
        if self.masked:
            legal = self.vecenv.action_masks
            _check_legal(legal, masks, ids, self._nvec, self.vecenv)
            action_masks = self.to_device("action_masks", legal, first)
        step = Step(
            obs=self.to_device("obs", obs, first),
            rewards=self.to_device("rewards", rewards, first),
            terminals=self.to_device("terminals", terminals, first),
            truncations=self.to_device("truncations", truncations, first),
            masks=self.to_device("masks", masks, first),
            ids=ids,
            infos=infos,
            action_masks=action_masks,
        )
        # Host-side check on the env's own flags: costs nothing on steps without truncation.
        truncated = np.asarray(truncations)
        if truncated.any():
            final = getattr(self.vecenv, "final_observations", None)
            rows = np.flatnonzero(truncated & ~np.asarray(terminals))
            if final is not None and len(rows):
                step.final_rows = rows
                # A copy: the env's side array is rewritten by the next step.
                step.final_obs = torch.from_numpy(final[rows]).to(self.device)
        return step

    def forward(self, step: Step) -> Step:
        """Run the policy on `step` (no grad): fills `state`, `params`, `value`, `next_state`."""
        start = time.perf_counter()
        state = self._gather_state(step)
        step.state = self._cut_state(step, state)
        forward = self.policy.forward_eval
        with torch.no_grad():
            if self.learn:
                self.policy.observe(step.obs, step.masks)
            with compute(self.precision, self.device):
                full = len(step.ids) == self.full_reply
                if full and self.graph_status == "pending":
                    self._graph, self.graph_status = GraphedForward.create(
                        self.policy, step.obs, step.state
                    )
                if self._graph is not None and full:
                    forward = self._graph
                params, value, step.next_state = forward(step.obs, step.state)
                if step.final_obs is not None:
                    step.final_values = self._final_values(step, state)
            step.params, step.value = policy_outputs(params, value)
        self.times["rollout"] += time.perf_counter() - start
        return step

    def _final_values(self, step: Step, state: tuple[Tensor, ...]) -> Tensor:
        """V(final obs) on the truncated rows, from the state that led to it (not cut)."""
        rows = torch.from_numpy(step.final_rows).to(self.device)
        _, value, _ = self.policy.forward_eval(step.final_obs, tuple(s[rows] for s in state))
        values = torch.zeros(len(step.ids), device=value.device)
        values[rows] = value.float()
        return values

    def sample(self, step: Step) -> tuple[Tensor, Tensor]:
        """(action, log-prob) drawn from `step.params` with torch's generator on the device.

        Returns:
            action: (B, *head.action_shape), the head's dtype (int64 or float32), unclipped.
            logprob: (B,) float32.
        """
        start = time.perf_counter()
        with torch.no_grad():
            action, logprob = self.policy.head.sample(step.params, step.action_masks)
        self.times["rollout"] += time.perf_counter() - start
        return action, logprob

    def send(self, step: Step, action: Tensor) -> None:
        """Keep `step.next_state` for its rows and send `action` in the env's form."""
        start = time.perf_counter()
        self._scatter_state(step.ids, step.next_state)
        if self.action_bounds is not None:
            low, high = self.action_bounds
            if self.rescale_actions:
                action = low + (action.clamp(-1.0, 1.0) + 1.0) * (0.5 * (high - low))
            # Also after the map: its float rounding can land one ulp past a bound.
            action = action.clamp(low, high)
        # Host-device sync: actions go back to the env on the host.
        env_actions = action.to(self.action_dtype).cpu().numpy()
        self.times["rollout"] += time.perf_counter() - start
        start = time.perf_counter()
        self.vecenv.send(env_actions)
        self.times["env"] += time.perf_counter() - start

    def act(self, step: Step) -> Tensor:
        """forward (unless done already), sample and send; returns the sampled action."""
        if step.params is None:
            self.forward(step)
        action, _ = self.sample(step)
        self.send(step, action)
        return action

    def hold(self, step: Step) -> None:
        """Keep `step` unsent; the next `take_held()` returns it (joined with the other steps
        held since) for the (updated) policy.

        The cut state goes back to the rows (not the step's output, which a later policy
        recomputes), and the observations are copied out of the env's arrays.
        """
        self._scatter_state(step.ids, step.state)
        self._held.append(
            Step(
                obs=step.obs.clone(),
                rewards=step.rewards,
                terminals=step.terminals,
                truncations=step.truncations,
                masks=step.masks.clone(),
                ids=step.ids.copy(),
                infos=[],
                action_masks=None if step.action_masks is None else step.action_masks.clone(),
            )
        )

    @property
    def held(self) -> Step | None:
        """The steps held since the last `take_held()` as one step, rows in agent order (each
        buffer's, with `EnvBuffers`), or None."""
        if len(self._held) > 1:
            self._held = [_joined(self._held)]
        return self._held[0] if self._held else None

    def take_held(self) -> Step | None:
        """The held step with its state gathered afresh, or None; clears it."""
        held, self._held = self.held, []
        if held is not None:
            # Its state was cut when it was held; the flags must not cut it again.
            held.terminals = torch.zeros_like(held.terminals)
            held.truncations = torch.zeros_like(held.truncations)
        return held

    def held_state(self) -> dict[str, Any]:
        """The held step and the recurrent state of every row, on CPU (for checkpoints)."""
        held = self.held
        return {
            "state": [s.cpu() for s in self.state],
            "held": None
            if held is None
            else {
                "obs": held.obs.cpu(),
                "masks": held.masks.cpu(),
                "ids": torch.from_numpy(held.ids.astype(np.int64)),
                "action_masks": None if held.action_masks is None else held.action_masks.cpu(),
            },
        }

    def load_held_state(self, saved: dict[str, Any]) -> None:
        """Inverse of `held_state()`; the env must stand where it stood when it was saved."""
        self.state = tuple(s.to(self.device) for s in saved["state"])
        held = saved["held"]
        if held is None:
            self._held = []
            return
        masks = held["masks"].to(self.device)
        no = torch.zeros_like(masks)
        action_masks = held.get("action_masks")
        self._held = [
            Step(
                obs=held["obs"].to(self.device),
                rewards=torch.zeros(masks.shape, device=self.device),
                terminals=no,
                truncations=no,
                masks=masks,
                ids=held["ids"].numpy(),
                infos=[],
                action_masks=None if action_masks is None else action_masks.to(self.device),
            )
        ]

    def to_device(self, name: str, array: np.ndarray, first_row: int = 0) -> Tensor:
        """A zero-copy tensor view of an env array on CPU; through pinned memory to CUDA.

        The pinned copy is kept per `name` and batch (`first_row`, its first agent row): a
        buffer's reply held at an iteration's end is not synced before the next buffer's is
        staged (`EnvBuffers`), so their asynchronous copies must not share host memory.
        """
        tensor = torch.from_numpy(np.asarray(array))
        if self.device.type == "cpu":
            return tensor
        key = (name, first_row)
        pinned = self._pinned.get(key)
        if pinned is None or pinned.shape != tensor.shape:
            pinned = self._pinned[key] = torch.empty_like(tensor).pin_memory()
        pinned.copy_(tensor)
        return pinned.to(self.device, non_blocking=True)

    def _gather_state(self, step: Step) -> tuple[Tensor, ...]:
        if not self.state:
            return ()
        if len(step.ids) == self.num_agents:
            return self.state
        rows = self._state_rows(step.ids)
        return tuple(s[rows] for s in self.state)

    def _cut_state(self, step: Step, state: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        if not state:
            return ()
        # Cut the recurrent state where this reply ended an episode: the row's observation is
        # already the first of the next one.
        keep = (~(step.terminals | step.truncations)).float()
        return tuple(s * keep.view(-1, *([1] * (s.dim() - 1))) for s in state)

    def _scatter_state(self, ids: np.ndarray, state: tuple[Tensor, ...]) -> None:
        if not self.state:
            return
        if len(ids) == self.num_agents:
            self.state = tuple(state)
            return
        rows = self._state_rows(ids)
        for stored, s in zip(self.state, state, strict=True):
            stored[rows] = s

    def _state_rows(self, ids: np.ndarray) -> slice | Tensor:
        """`ids` as rows of the state: a slice when they are consecutive (an env buffer's, a
        zero-copy batch's), which reads a view and writes one copy instead of gathering and
        scattering row by row; else an index tensor on the device."""
        first, n = int(ids[0]), len(ids)
        if int(ids[-1]) - first == n - 1 and bool((np.diff(ids) == 1).all()):
            return slice(first, first + n)
        return torch.from_numpy(ids).to(self.device)


def _joined(steps: list[Step]) -> Step:
    """Held steps (one per env buffer) as one step of their rows, in agent-row order."""
    steps = sorted(steps, key=lambda step: int(step.ids[0]))

    def cat(name: str) -> Tensor:
        return torch.cat([getattr(step, name) for step in steps])

    return Step(
        obs=cat("obs"),
        rewards=cat("rewards"),
        terminals=cat("terminals"),
        truncations=cat("truncations"),
        masks=cat("masks"),
        ids=np.concatenate([step.ids for step in steps]),
        infos=[],
        action_masks=None if steps[0].action_masks is None else cat("action_masks"),
    )


def _branch_sizes(space: spaces.Space) -> list[int]:
    """Choices per branch of a Discrete / MultiDiscrete action space (mask column groups)."""
    if isinstance(space, spaces.Discrete):
        return [int(space.n)]
    return [int(n) for n in np.asarray(space.nvec).ravel()]


def _check_legal(
    action_masks: np.ndarray, masks: np.ndarray, ids: np.ndarray, nvec: list[int], vecenv: Any
) -> None:
    """Raise `APIUsageError` when a row that must act has a branch with no legal action.

    Checked on the host, where the masks arrive, so the device never syncs for it. Rows that
    do not act this step (mask False: the other player's turn, padding) may have none.
    """
    if len(nvec) == 1:
        stuck = ~action_masks.any(axis=1)
    else:
        starts = np.concatenate([[0], np.cumsum(nvec)[:-1]])
        stuck = ~np.logical_or.reduceat(action_masks, starts, axis=1).all(axis=1)
    stuck &= masks
    if stuck.any():
        row = int(np.flatnonzero(stuck)[0])
        name = getattr(vecenv, "env_name", None) or getattr(vecenv, "name", None) or vecenv
        raise APIUsageError(
            f"env {name!r}: agent row {int(np.asarray(ids)[row])} must act but its legal-action "
            f"mask allows no action ({int(stuck.sum())} such rows in this batch); the env must "
            "leave at least one legal action per branch for every acting row (mask True)"
        )


def _box_bounds(space: spaces.Space, device: torch.device) -> tuple[Tensor, Tensor] | None:
    """A Box's bounds as float32 tensors to clip sampled actions to; None when nothing to clip."""
    if not isinstance(space, spaces.Box):
        return None
    if not (np.isfinite(space.low).any() or np.isfinite(space.high).any()):
        return None
    low = torch.as_tensor(space.low, dtype=torch.float32, device=device)
    high = torch.as_tensor(space.high, dtype=torch.float32, device=device)
    return low, high
