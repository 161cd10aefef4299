"""`train(env, config)`: the whole loop, from an env name or a vecenv to a finished run."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from puffer.core import make as make_env
from puffer.train import checkpoint as ckpt
from puffer.train import distributed
from puffer.train.config import Config
from puffer.train.metrics import JSONLSink, MetricsSink
from puffer.train.policies import Policy, make_policy
from puffer.train.pufferl import PuffeRL, apply_torch_threads

__all__ = ["TrainResult", "evaluate_episodes", "make_vecenv", "train"]


@dataclass
class TrainResult:
    """What a finished `train` call leaves behind.

    Attributes:
        run_dir: the run directory (None on DDP ranks other than 0 without a run_id).
        global_step: agent steps taken (all ranks).
        epochs: epochs completed.
        metrics: the last epoch's metrics dict.
        recent: mean of each env statistic over the last 100 finished episodes.
        policy: the trained policy (on the training device).
    """

    run_dir: Path | None
    global_step: int
    epochs: int
    metrics: dict[str, float]
    recent: dict[str, float] = field(default_factory=dict)
    policy: Policy | None = None


def make_vecenv(env_name: str, config: Config) -> Any:
    """The env `config.vec` asks for: the env itself ('native') or a puffer.vector backend."""
    vec, seed = config.vec, config.train.seed
    if vec.backend == "native":  # VecConfig checked num_envs and batch_size when built
        return make_env(env_name, **config.env)
    import puffer.vector

    return puffer.vector.make(
        env_name,
        num_envs=vec.num_envs,
        backend=vec.backend,
        num_workers=vec.num_workers,
        batch_size=vec.batch_size or None,
        zero_copy=vec.zero_copy,
        seed=seed,
        env_kwargs=dict(config.env),
    )


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def train(
    env: str | Any,
    config: Config | None = None,
    *,
    policy: Policy | None = None,
    sinks: list[MetricsSink] | None = None,
    dashboard: bool = False,
    wandb: bool = False,
    env_name: str | None = None,
) -> TrainResult:
    """Train on `env` until `config.train.total_timesteps`, checkpointing along the way.

    Args:
        env: a registered env name (made per `config.vec` and `config.env`) or a ready vecenv
            (not closed here).
        config: the run's config; defaults to `Config()`.
        policy: a prebuilt policy; default `make_policy(config.policy, vecenv)`.
        sinks: extra metric sinks; a JSONL sink in the run directory is always added.
        dashboard: add the rich terminal dashboard.
        wandb: add the wandb sink (the `wandb` extra; WANDB_MODE=offline works).
        env_name: names the run directory when `env` is a vecenv.

    Returns:
        a `TrainResult`.

    Example:
        >>> import tempfile
        >>> from puffer.train import Config, TrainConfig, VecConfig
        >>> config = Config(
        ...     train=TrainConfig(total_timesteps=256, horizon=16, minibatch_size=64,
        ...                       device="cpu", data_dir=tempfile.mkdtemp()),
        ...     vec=VecConfig(backend="serial", num_envs=4))
        >>> train("gym-CartPole-v1", config).global_step
        256
    """
    config = config or Config()
    cfg = config.train
    cfg.check_host()  # a missing GPU or an unwritable data_dir fails before any env exists
    distributed.init_from_env(cfg.device)
    rank, _ = distributed.rank_and_world()
    _seed_everything(cfg.seed + rank)
    apply_torch_threads(cfg)  # before the policy is built
    owns_env = isinstance(env, str)
    name = env if isinstance(env, str) else env_name or type(env).__name__
    vecenv = make_vecenv(env, config) if isinstance(env, str) else env
    trainer = None
    try:
        policy = policy if policy is not None else make_policy(config.policy, vecenv)
        run_dir = None
        if rank == 0 or cfg.run_id:
            run_dir = ckpt.make_run_dir(config, name) if rank == 0 else _run_dir(config, name)
        all_sinks = list(sinks or [])
        if rank == 0 and run_dir is not None:
            all_sinks.insert(0, JSONLSink(run_dir / ckpt.METRICS_NAME))
        if dashboard and rank == 0:
            from puffer.train.dashboard import Dashboard

            all_sinks.append(Dashboard(name))
        if wandb and rank == 0:
            from puffer.train.wandb_sink import WandbSink

            all_sinks.append(WandbSink(config, name))
        trainer = PuffeRL(config, vecenv, policy, sinks=all_sinks, run_dir=run_dir)
        if cfg.resume:
            trainer.load_state_dict(ckpt.load(_run_dir(config, name) / ckpt.CHECKPOINT_NAME))
        metrics: dict[str, float] = {}
        while trainer.epoch < trainer.sizes.epochs:
            trainer.evaluate()
            trainer.train()
            metrics = trainer.mean_and_log()
            interval = cfg.checkpoint_interval
            if run_dir is not None and interval > 0 and trainer.epoch % interval == 0:
                trainer.save_checkpoint()
        if run_dir is not None:
            trainer.save_checkpoint()
        recent = {key: trainer.recent_mean(key) for key in trainer.recent}
        return TrainResult(run_dir, trainer.global_step, trainer.epoch, metrics, recent, policy)
    finally:
        if trainer is not None:
            trainer.close()
        if owns_env:
            vecenv.close()


def _run_dir(config: Config, env_name: str) -> Path:
    return Path(config.train.data_dir) / env_name.replace("/", "_") / config.train.run_id


def evaluate_episodes(
    policy: Policy, vecenv: Any, episodes: int, seed: int = 0, max_steps: int = 10_000_000
) -> list[dict[str, float]]:
    """Run `policy` (sampling its actions) until `episodes` episode-stat dicts have come back.

    Args:
        policy: a trained policy (its device is used).
        vecenv: any env with the async API; reset here with `seed`, not closed.
        episodes: stat dicts to collect (one per finished episode for emulated envs; Ocean
            envs report means over several episodes per dict).
        seed: reset seed.
        max_steps: agent steps after which to stop anyway.

    Returns:
        the first `episodes` stat dicts, in arrival order.
    """
    device = next(policy.parameters()).device
    n = int(vecenv.num_agents)
    state = policy.initial_state(n, device)
    box = isinstance(vecenv.single_action_space, spaces.Box)
    stats: list[dict[str, float]] = []
    vecenv.async_reset(seed)
    steps = 0
    with torch.no_grad():
        while len(stats) < episodes and steps < max_steps:
            obs, _, terminals, truncations, infos, ids, _ = vecenv.recv()
            stats.extend({k: float(v) for k, v in info.items()} for info in infos)
            ids_t = torch.as_tensor(np.asarray(ids), device=device)
            keep = torch.from_numpy(~(terminals | truncations)).to(device).float()
            agent_state = tuple(s[ids_t] * keep.view(-1, *([1] * (s.dim() - 1))) for s in state)
            params, _, new_state = policy.forward_eval(
                torch.from_numpy(np.asarray(obs)).to(device), agent_state
            )
            for stored, s in zip(state, new_state, strict=True):
                stored[ids_t] = s
            action, _, _ = policy.head.sample(params)
            # Host-device sync: actions go back to the env on the host.
            action = action.cpu().numpy().astype(np.float32 if box else np.int32)
            vecenv.send(action)
            steps += len(ids)
    vecenv.recv()
    return stats[:episodes]
