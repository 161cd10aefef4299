"""Running observation and reward normalization, kept as module buffers so checkpoints hold them.

- `RunningMeanStd`: per-feature mean and variance over every row seen, merged batch by batch
  (Chan et al.'s parallel update), with row weights so padded agents (mask False) count for
  nothing. All on the device: an update takes no host-device sync.
- `ObsNormalizer`: (x - mean) / sqrt(var + eps), clipped to +-`clip`. Part of the policy (the
  MLP encoder owns one), so `puffer eval` and `evaluate_episodes` normalize with the saved
  statistics; only the trainer's rollout updates them (`Policy.observe`).
- `RewardScaler`: divides rewards by the running std of each agent's discounted return (the
  scheme of Gymnasium's `NormalizeReward` and SB3's `VecNormalize`), clipped to +-`clip`; the
  return is reset where an episode ended. The trainer owns it and stores its state in the
  checkpoint.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

__all__ = ["ObsNormalizer", "RewardScaler", "RunningMeanStd"]

EPS = 1e-8


class RunningMeanStd(nn.Module):
    """Running mean and (population) variance of `shape`-sized features.

    Args:
        shape: feature shape of one row.

    Example:
        >>> stats = RunningMeanStd((2,))
        >>> stats.update(torch.tensor([[0.0, 2.0], [2.0, 2.0]]))
        >>> stats.mean.tolist(), stats.var.tolist()
        ([1.0, 2.0], [1.0, 0.0])
    """

    mean: Tensor
    var: Tensor
    count: Tensor

    def __init__(self, shape: tuple[int, ...]):
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape))
        self.register_buffer("var", torch.ones(shape))
        # No rows yet: the first batch replaces the prior (mean 0, var 1) entirely.
        self.register_buffer("count", torch.zeros(()))

    @torch.no_grad()
    def update(self, x: Tensor, weights: Tensor | None = None) -> None:
        """Merge rows `x` (B, *shape), each weighted by `weights` (B,) (default 1)."""
        x = x.float()
        w = torch.ones(x.shape[0], device=x.device) if weights is None else weights.float()
        n = w.sum()
        w = w.view(-1, *([1] * (x.dim() - 1)))
        batch_mean = (w * x).sum(0) / n.clamp(min=EPS)
        batch_var = (w * (x - batch_mean).square()).sum(0) / n.clamp(min=EPS)
        total = self.count + n
        delta = batch_mean - self.mean
        share = n / total.clamp(min=EPS)  # 0 when every row was masked out: nothing changes
        m2 = self.var * self.count + batch_var * n + delta.square() * self.count * share
        self.mean += delta * share
        self.var.copy_(torch.where(total > 0, m2 / total.clamp(min=EPS), self.var))
        self.count.copy_(total)


class ObsNormalizer(nn.Module):
    """Standardizes float feature rows with running statistics.

    Args:
        features: width of the (flattened) rows.
        clip: normalized values are clipped to [-clip, clip].
    """

    def __init__(self, features: int, clip: float = 10.0):
        super().__init__()
        self.stats = RunningMeanStd((features,))
        self.clip = clip

    def update(self, x: Tensor, weights: Tensor | None = None) -> None:
        """Merge (B, features) rows into the statistics."""
        self.stats.update(x, weights)

    def forward(self, x: Tensor) -> Tensor:
        """(B, features) float32 -> (B, features) float32, normalized and clipped."""
        z = (x - self.stats.mean) / torch.sqrt(self.stats.var + EPS)
        return z.clamp(-self.clip, self.clip)


class RewardScaler(nn.Module):
    """Scales rewards by the running std of the discounted return, per agent row.

    Args:
        num_agents: rows of the env.
        gamma: the discount of the tracked return (the trainer's).
        clip: scaled rewards are clipped to [-clip, clip].

    Example:
        >>> scaler = RewardScaler(num_agents=2, gamma=0.99)
        >>> ids = torch.arange(2)
        >>> done = torch.zeros(2, dtype=torch.bool)
        >>> scaler(torch.tensor([1.0, 3.0]), done, ids).shape
        torch.Size([2])
    """

    returns: Tensor

    def __init__(self, num_agents: int, gamma: float, clip: float = 10.0):
        super().__init__()
        self.gamma = gamma
        self.clip = clip
        self.stats = RunningMeanStd(())
        self.register_buffer("returns", torch.zeros(num_agents))

    @torch.no_grad()
    def forward(
        self, rewards: Tensor, done: Tensor, ids: Tensor, weights: Tensor | None = None
    ) -> Tensor:
        """Scale `rewards` (B,) of rows `ids` (B,) int64; `done` (B,) bool marks episode ends.

        The rows' discounted returns take the rewards first, update the statistics (weighted
        by `weights`, e.g. the masks), and restart at 0 where `done`.
        """
        returns = self.returns[ids] * self.gamma + rewards
        self.stats.update(returns, weights)
        self.returns[ids] = returns * (~done).float()
        scaled = rewards / torch.sqrt(self.stats.var + EPS)
        return scaled.clamp(-self.clip, self.clip)
