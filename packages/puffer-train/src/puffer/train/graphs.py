"""The rollout forward as a CUDA graph: one replay per step instead of a launch per kernel.

A rollout step is small (one encoder pass, one recurrent cell, two heads over N rows), so on a
GPU the host's kernel launches, not the math, set its pace. `GraphedForward` captures
`policy.forward_eval` once for the full batch of N rows and replays it: inputs are copied into
the captured (static) tensors, outputs are cloned out of them. Parameters are read in place, so
optimizer steps and `load_state_dict` reach the graph without a new capture.

It is used for full replies only (the shape that was captured): every agent, or with
`vec.num_buffers` one buffer's agents, the one graph serving each buffer in turn; an async
vecenv's partial batches and CPU devices run the eager forward. `GraphedForward.create`
returns None with the reason when a graph cannot be used, for the trainer to report.
"""

from __future__ import annotations

import torch
from torch import Tensor

from puffer.train.policies import Policy

__all__ = ["GraphedForward"]

State = tuple[Tensor, ...]
# Eager passes on a side stream before capture: lazy initialisation (cuBLAS handles, workspace)
# must not happen inside the graph.
WARMUP_STEPS = 3


class GraphedForward:
    """`policy.forward_eval` for (N, *obs_shape) observations, replayed from a CUDA graph.

    Build it with `create`; call it like `forward_eval(obs, state)` with N rows. Call under
    `torch.no_grad()` (the rollout does).
    """

    def __init__(self, policy: Policy, obs: Tensor, state: State):
        self.static_obs = obs.clone()
        self.static_state = tuple(s.clone() for s in state)
        stream = torch.cuda.Stream(obs.device)
        stream.wait_stream(torch.cuda.current_stream(obs.device))
        with torch.no_grad(), torch.cuda.stream(stream):
            for _ in range(WARMUP_STEPS):
                policy.forward_eval(self.static_obs, self.static_state)
        torch.cuda.current_stream(obs.device).wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(self.graph):
            self.outputs = policy.forward_eval(self.static_obs, self.static_state)

    @staticmethod
    def unavailable(device: torch.device) -> str | None:
        """Why no graph can be captured on `device`, or None when one can be tried."""
        if device.type != "cuda":
            return f"eager forward: CUDA graphs need a CUDA device, the policy is on {device}"
        return None

    @classmethod
    def create(cls, policy: Policy, obs: Tensor, state: State) -> tuple[GraphedForward | None, str]:
        """A captured forward for inputs shaped like `obs` and `state`, or None and why not.

        Args:
            policy: the policy, on the device of `obs`.
            obs: (N, *obs_shape) example observations (their values are only warm-up input).
            state: the (N, ...) recurrent state tensors; `()` for a feed-forward policy.

        Returns:
            (graph, "captured") or (None, the reason the eager forward is used instead).
        """
        reason = cls.unavailable(obs.device)
        if reason is not None:
            return None, reason
        try:
            return cls(policy, obs, state), "captured"
        except (RuntimeError, NotImplementedError) as error:
            # Something in the forward cannot be captured (a host sync, a data-dependent shape):
            # the eager forward computes the same thing.
            torch.cuda.synchronize(obs.device)
            return None, f"eager forward: CUDA graph capture failed ({error})"

    def __call__(self, obs: Tensor, state: State) -> tuple[Tensor, Tensor, State]:
        """(params (N, P), value (N,), next state) for `obs`, `state` shaped as captured."""
        self.static_obs.copy_(obs)
        for static, s in zip(self.static_state, state, strict=True):
            static.copy_(s)
        self.graph.replay()
        # The next replay overwrites the outputs; the trainer keeps them longer than a step.
        params, value, next_state = self.outputs
        return params.clone(), value.clone(), tuple(s.clone() for s in next_state)
