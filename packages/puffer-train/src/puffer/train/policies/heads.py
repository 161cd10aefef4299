"""Action heads: map the network's hidden vector to a distribution over the env's actions.

Every head has the same four calls: `forward(hidden) -> params`, `sample(params, action_mask)
-> (action, logprob)`, `logprob_entropy(params, action, action_mask) -> (logprob, entropy)`,
and the attributes `action_shape` / `action_dtype` of the actions it produces (the trainer's
rollout buffer stores them as they are). Sampling takes no host-device sync.

Legal-action masks (`action_mask`, (..., sum(nvec)) bool, True = legal, the buffer contract's
`action_masks` row) apply to categorical heads: illegal logits are replaced by a large negative
number before anything else, so they are never sampled and carry no probability in the
log-probabilities or the entropy, in rollout and training alike. `None` (the default) is the
unmasked path, with no extra work. A row with no legal choice in a branch samples uniformly
from all of them: the trainer refuses such rows where they must act (`puffer.train.rollout`),
and rows that do not act are masked out of the loss.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from gymnasium import spaces
from torch import Tensor, nn

from puffer.core import APIUsageError
from puffer.kernels import Linear
from puffer.train.policies.encoders import layer_init

__all__ = ["ActionHead", "CategoricalHead", "GaussianHead", "MixedHead", "make_head"]

# Logit of a padded (non-existent) choice: exp() of it is exactly 0 in float32, and unlike
# -inf it keeps p * log p at 0 instead of NaN.
_PAD_LOGIT = -1e9


class ActionHead(nn.Module):
    """Base class; see the module docstring for the interface."""

    action_shape: tuple[int, ...]
    action_dtype: torch.dtype
    num_params: int

    @property
    def params_layer(self) -> nn.Linear | None:
        """The Linear layer whose output is exactly `forward(hidden)`, or None when the head
        computes more than one product (the policy then runs it beside the value's)."""
        return None

    def drop_params_layer(self) -> None:
        """Remove the layer `params_layer` names, for a policy whose own decoder computes the
        params (PufferNet's one matrix for logits and value): the head then samples and scores
        actions from params it is given, and `forward` is unavailable."""
        raise APIUsageError(
            f"{type(self).__name__} computes its params in more than one product; a shared "
            "decoder needs a head whose params are one Linear (Discrete, MultiDiscrete or Box)"
        )

    def sample(self, params: Tensor, action_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError

    def logprob_entropy(
        self, params: Tensor, action: Tensor, action_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        raise NotImplementedError


class CategoricalHead(ActionHead):
    """One categorical per branch: Discrete (one branch, action shape ()) or MultiDiscrete.

    Args:
        hidden_size: input width.
        nvec: choices per branch.
        scalar: True for a Discrete space (actions of shape (B,)), else (B, len(nvec)).
    """

    def __init__(self, hidden_size: int, nvec: list[int], scalar: bool = False):
        super().__init__()
        self.nvec = [int(n) for n in nvec]
        self.scalar = scalar
        self.action_shape = () if scalar else (len(self.nvec),)
        self.action_dtype = torch.int64
        self.num_params = sum(self.nvec)
        self.linear = layer_init(Linear(hidden_size, self.num_params), std=0.01)
        width = max(self.nvec)
        # Scatter map from flat logits into a (branches, width) grid padded with _PAD_LOGIT.
        index = torch.tensor(
            [b * width + i for b, n in enumerate(self.nvec) for i in range(n)], dtype=torch.long
        )
        self.register_buffer("_index", index, persistent=False)
        self._width = width

    @property
    def params_layer(self) -> nn.Linear | None:
        return self.linear

    def drop_params_layer(self) -> None:
        self.linear = None

    def forward(self, hidden: Tensor) -> Tensor:
        return self.linear(hidden)

    def logit_grid(self, params: Tensor, action_mask: Tensor | None = None) -> Tensor:
        """(..., branches, width) logits, padding and illegal choices at `_PAD_LOGIT`."""
        if action_mask is not None:
            params = params.masked_fill(~action_mask, _PAD_LOGIT)
        if len(self.nvec) == 1:
            return params.unsqueeze(-2)
        if all(n == self._width for n in self.nvec):
            return params.view(*params.shape[:-1], len(self.nvec), self._width)
        grid = params.new_full((*params.shape[:-1], len(self.nvec) * self._width), _PAD_LOGIT)
        grid[..., self._index] = params
        return grid.view(*params.shape[:-1], len(self.nvec), self._width)

    @staticmethod
    def _logprob(logp_all: Tensor, action: Tensor) -> Tensor:
        """(...,) log-probability of `action` ((..., branches)), summed over branches."""
        return logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1).sum(-1)

    def _stats(self, logits: Tensor, action: Tensor) -> tuple[Tensor, Tensor]:
        logp_all = torch.log_softmax(logits, dim=-1)
        entropy = -(logp_all.exp() * logp_all).sum(-1).sum(-1)
        return self._logprob(logp_all, action), entropy

    def sample(self, params: Tensor, action_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        logp_all = torch.log_softmax(self.logit_grid(params, action_mask), dim=-1)
        # Gumbel-max: argmax(log p - log q) with q = -log U ~ Exp(1) (the exponential race that
        # torch.multinomial runs, in log space). Not multinomial itself: it checks p on the
        # host, a sync on every CUDA step. U is drawn from [tiny, 1), so log q is finite (within
        # [-16.7, 4.5]) and a masked choice, 1e9 below, never wins. On the CPU this is 2.3x
        # faster than softmax + exponential_ (whose Exp(1) draw alone costs 6x a uniform one).
        # Non-finite logits surface as a non-finite loss, which `PuffeRL.train` refuses.
        race = torch.empty_like(logp_all).uniform_(torch.finfo(logp_all.dtype).tiny, 1.0)
        action = (logp_all - race.log_().neg_().log_()).argmax(-1)
        return (action.squeeze(-1) if self.scalar else action), self._logprob(logp_all, action)

    def logprob_entropy(
        self, params: Tensor, action: Tensor, action_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        action = action.long()
        logits = self.logit_grid(params, action_mask)
        return self._stats(logits, action.unsqueeze(-1) if self.scalar else action)


def _no_mask(head: ActionHead, action_mask: Tensor | None) -> None:
    if action_mask is not None:
        raise APIUsageError(
            f"{type(head).__name__} got a legal-action mask; masks apply to Discrete and "
            "MultiDiscrete actions only (the env's action space is continuous or mixed)"
        )


class GaussianHead(ActionHead):
    """Diagonal Gaussian with a learned state-independent log std, for float32 Box actions;
    the log std of each of the `dim` dimensions starts at `log_std_init`."""

    def __init__(self, hidden_size: int, dim: int, log_std_init: float = 0.0):
        super().__init__()
        self.action_shape = (dim,)
        self.action_dtype = torch.float32
        self.num_params = dim
        self.mean = layer_init(Linear(hidden_size, dim), std=0.01)
        self.log_std = nn.Parameter(torch.full((dim,), float(log_std_init)))

    @property
    def params_layer(self) -> nn.Linear | None:
        return self.mean

    def drop_params_layer(self) -> None:
        self.mean = None

    def forward(self, hidden: Tensor) -> Tensor:
        return self.mean(hidden)

    def _stats(self, mean: Tensor, action: Tensor) -> tuple[Tensor, Tensor]:
        log_std = self.log_std.expand_as(mean)
        z = (action - mean) / log_std.exp()
        logprob = (-0.5 * z.square() - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        entropy = (0.5 + 0.5 * math.log(2 * math.pi) + log_std).sum(-1)
        return logprob, entropy

    def sample(self, params: Tensor, action_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        _no_mask(self, action_mask)
        action = params + self.log_std.exp() * torch.randn_like(params)
        return action, self._stats(params, action)[0]

    def logprob_entropy(
        self, params: Tensor, action: Tensor, action_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        _no_mask(self, action_mask)
        return self._stats(params, action)


class MixedHead(ActionHead):
    """Discrete and continuous parts packed side by side in one float32 action row.

    Args:
        hidden_size: input width.
        parts: `("discrete", n)` (one column holding the choice) or `("continuous", dim)`
            (dim columns), in the row's column order.
        log_std_init: the continuous parts' initial log std (`GaussianHead`).
    """

    def __init__(self, hidden_size: int, parts: list[tuple[str, int]], log_std_init: float = 0.0):
        super().__init__()
        heads, columns = [], []
        for kind, size in parts:
            if kind == "discrete":
                heads.append(CategoricalHead(hidden_size, [size], scalar=True))
                columns.append(1)
            elif kind == "continuous":
                heads.append(GaussianHead(hidden_size, size, log_std_init))
                columns.append(size)
            else:
                raise APIUsageError(f"MixedHead part kind {kind!r}; use 'discrete'/'continuous'")
        self.parts = nn.ModuleList(heads)
        self._columns = columns
        self._params = [h.num_params for h in heads]
        self.action_shape = (sum(columns),)
        self.action_dtype = torch.float32
        self.num_params = sum(self._params)

    def forward(self, hidden: Tensor) -> Tensor:
        return torch.cat([head(hidden) for head in self.parts], dim=-1)

    def sample(self, params: Tensor, action_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        _no_mask(self, action_mask)
        actions, logprob = [], 0.0
        for head, p in zip(self.parts, params.split(self._params, -1), strict=True):
            a, lp = head.sample(p)
            actions.append(a.float().view(*p.shape[:-1], -1))
            logprob = logprob + lp
        return torch.cat(actions, dim=-1), logprob

    def logprob_entropy(
        self, params: Tensor, action: Tensor, action_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        _no_mask(self, action_mask)
        logprob, entropy = 0.0, 0.0
        chunks = zip(
            self.parts, params.split(self._params, -1), action.split(self._columns, -1), strict=True
        )
        for head, p, a in chunks:
            lp, ent = head.logprob_entropy(
                p, a.squeeze(-1) if isinstance(head, CategoricalHead) else a
            )
            logprob, entropy = logprob + lp, entropy + ent
        return logprob, entropy


def make_head(
    hidden_size: int,
    action_space: spaces.Space,
    action_layout: object = None,
    log_std_init: float = 0.0,
):
    """The head for a buffer action space (Discrete, MultiDiscrete, float32 Box, or mixed).

    A mixed Dict of discrete and continuous actions arrives as a float32 Box with an
    `action_layout`; its leaves, in layout order, become the parts of a `MixedHead`. Every
    Gaussian part's log std starts at `log_std_init`.

    Raises:
        APIUsageError: the space has no head.
    """
    if isinstance(action_space, spaces.Discrete):
        return CategoricalHead(hidden_size, [int(action_space.n)], scalar=True)
    if isinstance(action_space, spaces.MultiDiscrete):
        return CategoricalHead(hidden_size, list(np.asarray(action_space.nvec).ravel()))
    if isinstance(action_space, spaces.Box) and action_layout is not None:
        return MixedHead(hidden_size, _mixed_parts(action_layout), log_std_init)
    if isinstance(action_space, spaces.Box):
        return GaussianHead(hidden_size, int(np.prod(action_space.shape)), log_std_init)
    raise APIUsageError(
        f"no action head for {action_space!r}; use Discrete, MultiDiscrete or a float32 Box"
    )


def _mixed_parts(layout: object) -> list[tuple[str, int]]:
    """Parts of a mixed action row from the leaf spaces of its layout, in column order."""
    leaves = getattr(layout, "leaves", None)
    if leaves is None:
        raise APIUsageError(f"action_layout {layout!r} has no `leaves`; cannot build a MixedHead")
    parts: list[tuple[str, int]] = []
    for leaf in leaves:
        space = getattr(leaf, "space", leaf)
        if isinstance(space, spaces.Discrete):
            parts.append(("discrete", int(space.n)))
        elif isinstance(space, spaces.MultiDiscrete):
            parts.extend(("discrete", int(n)) for n in np.asarray(space.nvec).ravel())
        elif isinstance(space, spaces.Box):
            parts.append(("continuous", int(np.prod(space.shape))))
        else:
            raise APIUsageError(f"mixed action leaf {space!r} is neither discrete nor a Box")
    return parts
