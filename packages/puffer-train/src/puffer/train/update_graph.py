"""A minibatch's whole update as one CUDA graph (`GraphedUpdate`, `train.update_graph`).

On a GPU one minibatch of a 25-35k-parameter policy is some hundreds of small kernels (the
advantage pass, priorities and sampling, the forward over the segments, the PPO loss, backward,
the gradient clip, Newton-Schulz and the Muon step); launched one by one from Python, the host
sets the pace, not the math. PufferLib 4.0 captures "the entire train minibatch + loss + policy
update" once and replays it. So does this: the body below is `Update`'s own minibatch
(`Update.advantages`, `select_minibatch`, `update_minibatch`), run once under capture and
replayed for every minibatch after.

A graph replays kernels on the addresses it captured, with the numbers it captured. So the
body reads only tensors that stay put for the run: the rollout buffer, the flat parameter,
gradient and optimizer buffers (`puffer.train.flat`), and three inputs written before each
iteration's replays: the learning rate `lr` (the optimizer reads it as a tensor while
capturing, `param_groups[0]["lr"]`), the importance exponent `beta`, and the statistics'
accumulators `totals`, zeroed. Sampling draws from torch's CUDA generator, which a graph
advances on each replay, so replayed minibatches draw fresh rows.

The same body runs eagerly where nothing is captured (`capture=False`): on the CPU, the tests
compare it with `Update`'s loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import torch
from torch import Tensor

from puffer.train import distributed

if TYPE_CHECKING:
    from puffer.train.update import Update

__all__ = ["GraphedUpdate"]


class GraphedUpdate:
    """The minibatches of `update`'s iterations, from one body with tensor inputs.

    Build it with `create` on CUDA (after one eager iteration, which warms up what captures
    cannot initialise: cuBLAS handles, the optimizer's workspace), or directly with
    `capture=False` to run the body eagerly. Call it with an iteration's beta after
    `Update.schedule`.

    Args:
        update: the trainer's `Update`; its buffer, policy and optimizer are the body's.
        keys: the statistics one minibatch adds to the totals (an eager iteration's keys).
        capture: capture the body as a CUDA graph (its device must be CUDA).
    """

    def __init__(self, update: Update, keys: Iterable[str], capture: bool = True):
        self.update = update
        device = update.device
        self.lr = torch.zeros((), device=device)
        self.beta = torch.zeros((), device=device)
        self.totals = {key: torch.zeros((), device=device) for key in keys}
        self.rows = update.replay()  # views of the buffer and one value-mask tensor: static
        sizes = update.sizes
        self.advantages = torch.zeros(sizes.segments, sizes.horizon, device=device)
        self.graph: torch.cuda.CUDAGraph | None = None
        if capture:
            self.graph = torch.cuda.CUDAGraph()
            with self._tensor_lr(), torch.cuda.graph(self.graph):
                self._body()

    @staticmethod
    def unavailable(device: torch.device) -> str | None:
        """Why no update graph can be captured on `device` in this process, or None."""
        if device.type != "cuda":
            return f"eager update: CUDA graphs need a CUDA device, the policy is on {device}"
        if distributed.rank_and_world()[1] > 1:
            return "eager update: the gradient all-reduce of distributed training is not captured"
        return None

    @classmethod
    def create(cls, update: Update, keys: Iterable[str]) -> tuple[GraphedUpdate | None, str]:
        """A captured update, or None and the reason the eager loop goes on instead."""
        reason = cls.unavailable(update.device)
        if reason is not None:
            return None, reason
        try:
            return cls(update, keys), "captured"
        except (RuntimeError, NotImplementedError) as error:
            # Something in the body syncs with the host or allocates outside the graph's pool
            # (an LSTM's fused-path check is one): the eager loop computes the same update.
            torch.cuda.synchronize(update.device)
            return None, f"eager update: CUDA graph capture failed ({error})"

    def __call__(self, beta: float) -> tuple[dict[str, Tensor], Tensor]:
        """Run one iteration's minibatches (the learning rate as `Update.schedule` left it).

        Returns:
            (the iteration's summed statistics, the last minibatch's (S, T) advantages): what
            `Update.iteration_losses` reads.
        """
        update = self.update
        update.buffer.ratio.fill_(1.0)
        self.lr.fill_(update.optimizer.param_groups[0]["lr"])
        self.beta.fill_(beta)
        for total in self.totals.values():
            total.zero_()
        for _ in range(update.sizes.minibatches):
            if self.graph is not None:
                self.graph.replay()
            else:
                with self._tensor_lr():
                    self._body()
        return self.totals, self.advantages

    def _body(self) -> None:
        """One minibatch: its advantages (kept for the iteration's explained variance), its
        rows by priority, forward, loss, backward, clip and step."""
        update = self.update
        advantages = update.advantages()
        self.advantages.copy_(advantages)
        minibatch = update.select_minibatch(self.rows, advantages, self.beta)
        update.update_minibatch(self.rows, minibatch, self.totals)

    @contextmanager
    def _tensor_lr(self) -> Iterator[None]:
        """While open, the optimizer's group reads its learning rate from the tensor `lr`."""
        group = self.update.optimizer.param_groups[0]
        number, group["lr"] = group["lr"], self.lr
        try:
            yield
        finally:
            group["lr"] = number
