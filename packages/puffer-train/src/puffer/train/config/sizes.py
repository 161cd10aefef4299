"""`Sizes`: the batch, segment and minibatch counts a `TrainConfig` implies for an env.

They need the env's agent count, so they are computed once, when the trainer is built, and
validated there with the numbers in the message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from puffer.train.config.keys import ConfigError
from puffer.train.config.sections import TrainConfig

__all__ = ["Sizes"]


@dataclass(frozen=True)
class Sizes:
    """Sizes derived from `TrainConfig` and the env's agent count, validated once.

    Attributes:
        num_agents: rows the vecenv reports per full step (N).
        horizon: steps per segment (T).
        segments: segments per iteration (S = batch_size / T).
        chunks: segments each agent fills per iteration (S / N).
        batch_size: agent steps per iteration (S * T).
        minibatch_segments: segments per minibatch.
        minibatches: minibatches per iteration: update_epochs * S / minibatch_segments, or with
            a replay_ratio int(replay_ratio * S / minibatch_segments), at least 1.
        iterations: iterations (one rollout and one update each; an update makes
            `update_epochs` passes over the batch) to reach total_timesteps over all DDP ranks
            (rounded up).
    """

    num_agents: int
    horizon: int
    segments: int
    chunks: int
    batch_size: int
    minibatch_segments: int
    minibatches: int
    iterations: int

    @classmethod
    def derive(cls, train: TrainConfig, num_agents: int, world_size: int = 1) -> Sizes:
        """Compute and check every derived size; `world_size` ranks share total_timesteps.

        Raises:
            ConfigError: a size does not divide another; the message shows both numbers.
        """
        horizon = train.horizon
        batch_size = train.batch_size or num_agents * horizon
        if batch_size % (num_agents * horizon):
            raise ConfigError(
                f"train.batch_size {batch_size} is not a multiple of num_agents * horizon = "
                f"{num_agents} * {horizon} = {num_agents * horizon}; set it to a multiple "
                "(or 0 for one segment per agent)"
            )
        minibatch_size = min(train.minibatch_size, batch_size)
        if minibatch_size % horizon:
            raise ConfigError(
                f"train.minibatch_size {minibatch_size} is not a multiple of horizon {horizon}"
            )
        segments = batch_size // horizon
        minibatch_segments = minibatch_size // horizon
        if segments % minibatch_segments:
            raise ConfigError(
                f"segments per iteration {segments} (batch_size {batch_size} / horizon {horizon}) is "
                f"not a multiple of segments per minibatch {minibatch_segments} (minibatch_size "
                f"{minibatch_size} / horizon {horizon}); pick sizes that divide"
            )
        minibatches = train.update_epochs * segments // minibatch_segments
        if train.replay_ratio > 0:
            minibatches = max(1, int(train.replay_ratio * segments / minibatch_segments))
        return cls(
            num_agents=num_agents,
            horizon=horizon,
            segments=segments,
            chunks=segments // num_agents,
            batch_size=batch_size,
            minibatch_segments=minibatch_segments,
            minibatches=minibatches,
            iterations=max(1, math.ceil(train.total_timesteps / (batch_size * world_size))),
        )
