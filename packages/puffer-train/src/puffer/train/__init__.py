"""puffer.train: PuffeRL (PPO with the puff advantage, prioritized segment replay, Muon),
policies, checkpoints, metrics sinks and the `train` driver."""

from __future__ import annotations

from puffer.train.checkpoint import CheckpointError
from puffer.train.config import (
    Config,
    PolicyConfig,
    Sizes,
    TrainConfig,
    VecConfig,
    field_help,
    load_config,
)
from puffer.train.evaluate import evaluate_episodes
from puffer.train.metrics import JSONLSink, MetricsSink
from puffer.train.policies import Policy, make_policy
from puffer.train.pufferl import DivergedError, PuffeRL
from puffer.train.run import TrainResult, train
from puffer.train.runtime import apply_torch_settings
from puffer.train.storage import StorageError

__version__ = "0.1.0"

__all__ = [
    "CheckpointError",
    "Config",
    "DivergedError",
    "JSONLSink",
    "MetricsSink",
    "Policy",
    "PolicyConfig",
    "PuffeRL",
    "Sizes",
    "StorageError",
    "TrainConfig",
    "TrainResult",
    "VecConfig",
    "apply_torch_settings",
    "evaluate_episodes",
    "field_help",
    "load_config",
    "make_policy",
    "train",
]
