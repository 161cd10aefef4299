"""Typed configuration: one dataclass per TOML section, plus the sizes derived from them.

Every field carries a one-line meaning in its metadata (`field_help(cls)` lists them), which the
CLI turns into `--help`. Derived sizes (segments, minibatches, epochs) are computed once, in
`Sizes.derive`, and validated there with the numbers in the message.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from puffer.core import APIUsageError

__all__ = ["Config", "PolicyConfig", "Sizes", "TrainConfig", "VecConfig", "field_help"]


def _f(default: Any, help: str) -> Any:
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """The `[train]` section: PPO, the puff advantage, replay, optimizer and bookkeeping."""

    seed: int = _f(42, "seed of torch, numpy and env resets (rank r of DDP uses seed + r)")
    device: str = _f("auto", "'cpu', 'cuda', 'cuda:N', or 'auto' (cuda when available)")
    torch_threads: int = _f(1, "torch intra-op threads (1 leaves the other core to the envs)")
    total_timesteps: int = _f(10_000_000, "agent steps to train for")
    batch_size: int = _f(0, "agent steps per epoch; 0 means num_agents * horizon")
    horizon: int = _f(64, "steps per segment (the BPTT length of recurrent policies)")
    minibatch_size: int = _f(8192, "agent steps per minibatch; a multiple of horizon")
    update_epochs: int = _f(1, "passes over the batch per epoch (minibatches sampled with replay)")
    gamma: float = _f(0.995, "discount factor")
    gae_lambda: float = _f(0.90, "GAE lambda")
    vtrace_rho_clip: float = _f(1.0, "V-trace rho-bar: clip of the importance ratio in delta")
    vtrace_c_clip: float = _f(1.0, "V-trace c-bar: clip of the importance ratio in the trace")
    prio_alpha: float = _f(0.8, "segment priority exponent alpha; 0 samples segments uniformly")
    prio_beta0: float = _f(0.2, "importance-weight exponent beta at the start, annealed to 1")
    clip_coef: float = _f(0.2, "PPO ratio clip")
    vf_clip_coef: float = _f(0.2, "value clip around the rollout value")
    vf_coef: float = _f(2.0, "value-loss weight")
    ent_coef: float = _f(0.001, "entropy-bonus weight")
    max_grad_norm: float = _f(1.5, "global gradient-norm clip")
    optimizer: str = _f("muon", "'muon' (Muon on hidden 2-D weights, AdamW on the rest) or 'adam'")
    learning_rate: float = _f(0.015, "peak learning rate")
    anneal_lr: bool = _f(True, "cosine-decay the learning rate to 0 over training")
    adam_beta1: float = _f(0.95, "Adam/AdamW beta1")
    adam_beta2: float = _f(0.999, "Adam/AdamW beta2")
    adam_eps: float = _f(1e-12, "Adam/AdamW epsilon")
    muon_momentum: float = _f(0.95, "Muon momentum")
    weight_decay: float = _f(0.0, "decoupled weight decay (Muon and AdamW)")
    data_dir: str = _f("experiments", "root of run directories: <data_dir>/<env>/<run_id>/")
    run_id: str = _f("", "run directory name; empty makes a fresh time-stamped id")
    checkpoint_interval: int = _f(
        50, "epochs between checkpoints (one is always written at the end)"
    )
    resume: bool = _f(False, "continue the run in <data_dir>/<env>/<run_id> from its checkpoint")


@dataclass
class PolicyConfig:
    """The `[policy]` section: which network maps observations to actions and values."""

    encoder: str = _f("mlp", "'mlp', 'nature_cnn' or 'impala' (the last two for image obs)")
    hidden_size: int = _f(128, "width of the encoder output and the recurrent core")
    num_layers: int = _f(0, "hidden Linear+GELU layers after the first in the MLP encoder")
    recurrent: str = _f("none", "'none', 'lstm' or 'mingru'")
    mingru_layers: int = _f(1, "stacked MinGRU layers when recurrent = 'mingru'")
    cnn_channels: int = _f(32, "base channel count of the CNN encoders")


@dataclass
class VecConfig:
    """The `[vec]` section: how `train(env_name, ...)` vectorizes the env."""

    backend: str = _f("native", "'native' (the env itself), 'serial', 'multiprocessing' or 'ray'")
    num_envs: int = _f(1, "env instances (each may hold many agents)")
    num_workers: int = _f(1, "worker processes (or Ray actors), each owning num_envs/num_workers")
    batch_size: int = _f(
        0, "envs per recv(); 0 means num_envs (synchronous), fewer is EnvPool-style async"
    )
    zero_copy: bool = _f(True, "async batches are fixed worker groups returned as views")


@dataclass
class Config:
    """A whole run: the sections above plus keyword arguments for the env constructor."""

    train: TrainConfig = field(default_factory=TrainConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    vec: VecConfig = field(default_factory=VecConfig)
    env: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready nested dict (what the run directory stores)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        """Inverse of `to_dict`; unknown keys raise `APIUsageError` naming them."""
        sections = {"train": TrainConfig, "policy": PolicyConfig, "vec": VecConfig}
        kwargs: dict[str, Any] = {"env": dict(data.get("env", {}))}
        for name, section in sections.items():
            values = dict(data.get(name, {}))
            known = {f.name for f in dataclasses.fields(section)}
            unknown = sorted(set(values) - known)
            if unknown:
                raise APIUsageError(
                    f"config section [{name}] has unknown keys {unknown}; known keys: "
                    f"{sorted(known)}"
                )
            kwargs[name] = section(**values)
        return cls(**kwargs)


def field_help(section: type) -> dict[str, str]:
    """`{field name: one-line meaning}` for a config dataclass."""
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(section)}


@dataclass(frozen=True)
class Sizes:
    """Sizes derived from `TrainConfig` and the env's agent count, validated once.

    Attributes:
        num_agents: rows the vecenv reports per full step (N).
        horizon: steps per segment (T).
        segments: segments per epoch (S = batch_size / T).
        chunks: segments each agent fills per epoch (S / N).
        batch_size: agent steps per epoch (S * T).
        minibatch_segments: segments per minibatch.
        minibatches: minibatches per epoch (update_epochs * S / minibatch_segments).
        epochs: epochs to reach total_timesteps over all DDP ranks (rounded up).
    """

    num_agents: int
    horizon: int
    segments: int
    chunks: int
    batch_size: int
    minibatch_segments: int
    minibatches: int
    epochs: int

    @classmethod
    def derive(cls, train: TrainConfig, num_agents: int, world_size: int = 1) -> Sizes:
        """Compute and check every derived size; `world_size` ranks share total_timesteps.

        Raises:
            APIUsageError: a size does not divide another; the message shows both numbers.
        """
        horizon = train.horizon
        batch_size = train.batch_size or num_agents * horizon
        if horizon < 1:
            raise APIUsageError(f"train.horizon is {horizon}; it must be >= 1")
        if batch_size % (num_agents * horizon):
            raise APIUsageError(
                f"train.batch_size {batch_size} is not a multiple of num_agents * horizon = "
                f"{num_agents} * {horizon} = {num_agents * horizon}; set it to a multiple "
                "(or 0 for one segment per agent)"
            )
        minibatch_size = min(train.minibatch_size, batch_size)
        if minibatch_size % horizon:
            raise APIUsageError(
                f"train.minibatch_size {minibatch_size} is not a multiple of horizon {horizon}"
            )
        segments = batch_size // horizon
        minibatch_segments = minibatch_size // horizon
        if segments % minibatch_segments:
            raise APIUsageError(
                f"segments per epoch {segments} (batch_size {batch_size} / horizon {horizon}) is "
                f"not a multiple of segments per minibatch {minibatch_segments} (minibatch_size "
                f"{minibatch_size} / horizon {horizon}); pick sizes that divide"
            )
        if train.update_epochs < 1:
            raise APIUsageError(f"train.update_epochs is {train.update_epochs}; it must be >= 1")
        return cls(
            num_agents=num_agents,
            horizon=horizon,
            segments=segments,
            chunks=segments // num_agents,
            batch_size=batch_size,
            minibatch_segments=minibatch_segments,
            minibatches=train.update_epochs * segments // minibatch_segments,
            epochs=max(1, math.ceil(train.total_timesteps / (batch_size * world_size))),
        )
