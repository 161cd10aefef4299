"""`train(env, config)`: the whole loop, from an env name or a vecenv to a finished run."""

from __future__ import annotations

import contextlib
import math
import random
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from puffer.core import APIUsageError, PufferError, WorkerError, env_creator
from puffer.core import make as make_env
from puffer.train import checkpoint as ckpt
from puffer.train import distributed
from puffer.train.config import Config, Sizes, load_config
from puffer.train.env_buffers import EnvBuffers
from puffer.train.limits import check_limits
from puffer.train.metrics import JSONLSink, MetricsSink, truncate_jsonl
from puffer.train.paths import RunPaths
from puffer.train.policies import Policy, make_policy
from puffer.train.pufferl import PuffeRL
from puffer.train.runtime import apply_torch_settings
from puffer.train.score import RunScore, ScoredSinks
from puffer.train.storage import StorageError

__all__ = ["TrainResult", "TrainingInterrupted", "budget_note", "make_vecenv", "train"]


@dataclass
class TrainResult:
    """What a finished `train` call leaves behind.

    Attributes:
        run_dir: the run directory (None on DDP ranks other than 0 without a run_id).
        global_step: agent steps taken (all ranks).
        iterations: iterations (rollout + update) completed.
        metrics: the last iteration's metrics dict.
        score: the run's score (`puffer.train.score`; nan when no episode reported the
            statistic).
        score_stat: the env statistic scored (`train.score_stat`, "auto" resolved).
        score_episodes: the episodes the score averages.
        recent: every env statistic averaged over the same episodes as the score.
        policy: the trained policy (on the training device).
    """

    run_dir: Path | None
    global_step: int
    iterations: int
    metrics: dict[str, float]
    score: float = math.nan
    score_stat: str = ""
    score_episodes: int = 0
    recent: dict[str, float] = field(default_factory=dict)
    policy: Policy | None = None


def make_vecenv(env_name: str, config: Config) -> Any:
    """The env `config.vec` asks for: the env itself ('native'; split into `EnvBuffers` when
    `vec.num_buffers` is above 1) or a puffer.vector backend."""
    vec, seed = config.vec, config.train.seed
    if vec.backend == "native":  # VecConfig refused more than one instance for it
        if vec.num_buffers > 1:
            return EnvBuffers(env_creator(env_name), vec.num_buffers, config.env_kwargs(), env_name)
        return make_env(env_name, **config.env_kwargs())
    import puffer.vector

    backend_kwargs = (
        {"worker_timeout": vec.worker_timeout} if vec.backend == "multiprocessing" else {}
    )
    return puffer.vector.make(
        env_name,
        num_instances=vec.num_instances,
        backend=vec.backend,
        num_workers=vec.num_workers,
        instances_per_recv=vec.instances_per_recv or None,
        zero_copy=vec.zero_copy,
        seed=seed,
        env_kwargs=config.env_kwargs(),
        **backend_kwargs,
    )


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (user envs and policies may draw from it)
    torch.manual_seed(seed)


class TrainingInterrupted(KeyboardInterrupt):
    """SIGINT/SIGTERM stopped `train` at an iteration boundary after it wrote a checkpoint.

    Attributes:
        signum: the signal (`signal.SIGINT` or `signal.SIGTERM`).
        paths: the run's `RunPaths`; `paths.checkpoint` holds the iteration just finished.
        global_step: agent steps in that checkpoint.
    """

    def __init__(self, signum: int, paths: RunPaths | None, global_step: int):
        where = f"; checkpoint {paths.checkpoint}" if paths is not None else ""
        super().__init__(f"stopped by {signal.Signals(signum).name} at step {global_step}{where}")
        self.signum = signum
        self.paths = paths
        self.global_step = global_step


class _StopSignals:
    """While active, SIGINT/SIGTERM ask the training loop to stop at the next iteration end.

    A second signal raises `KeyboardInterrupt` at once (the last checkpoint stays), unless it
    comes within `REPEAT_S` of the first: launchers such as `uv run` forward a Ctrl-C to a
    child that the terminal already sent it to. Only the main thread can take signals;
    elsewhere this does nothing.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)
    REPEAT_S = 1.0

    def __init__(self) -> None:
        self.signum: int | None = None
        self._first = 0.0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def _handle(self, signum: int, frame: object) -> None:
        now = time.monotonic()
        if self.signum is None:
            self.signum, self._first = signum, now
        elif now - self._first > self.REPEAT_S:
            raise KeyboardInterrupt

    def requested(self, device: torch.device) -> int | None:
        """The signal that asked to stop, on any DDP rank (so all stop together), or None."""
        if not dist.is_initialized() or dist.get_world_size() == 1:
            return self.signum
        flag = torch.tensor([self.signum or 0], device=device)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        # Host-device sync: once per iteration.
        return int(flag.item()) or None


def train(
    env: str | Any,
    config: Config | None = None,
    *,
    config_file: str | Path | None = None,
    overrides: Sequence[str] = (),
    policy: Policy | None = None,
    sinks: list[MetricsSink] | None = None,
    dashboard: bool = False,
    progress: float | None = None,
    progress_label: str = "",
    env_name: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train on `env` until `config.train.total_timesteps`, checkpointing along the way.

    SIGINT (Ctrl-C) or SIGTERM stops the run at the end of the current iteration (after its update
    and its metrics row), writes a checkpoint there and raises `TrainingInterrupted`; resume
    it with `train.resume` and the same `train.run_id`. A second signal stops at once.

    Args:
        env: a registered env name (made per `config.vec` and `config.env`) or a ready vecenv
            (not closed here).
        config: the run's config. Without one, an env name's config is resolved as `puffer
            train ENV --config FILE OVERRIDES` resolves it (`load_config(env, config_file,
            overrides)`: the env's TOML, then the file, then the overrides); a vecenv's is
            `Config()`.
        config_file: a TOML layered over the env's own (with an env name and no `config`).
        overrides: `--section.key value` tokens, e.g. ["--train.learning-rate", "3e-4"] (with
            an env name and no `config`).
        policy: a prebuilt policy; default `make_policy(config.policy, vecenv)`.
        sinks: extra metric sinks; a JSONL sink in the run directory is always added, and
            TensorBoard and wandb ones when `train.tensorboard` / `train.wandb` say so. Every
            sink sees each iteration's metrics with the run's score (`puffer.train.score`).
        dashboard: add the rich terminal dashboard.
        progress: write a plain progress line to stdout every this many seconds
            (`puffer.train.progress.ProgressLines`), for logs that are not a terminal.
        progress_label: what each progress line starts with (e.g. a sweep's run).
        env_name: names the run directory when `env` is a vecenv.
        notify: called (on rank 0) with a line when the run will not do exactly what the config
            says: a budget that is not a whole number of batches is rounded up to one (the
            line gives the steps it will train).

    Returns:
        a `TrainResult`.

    Raises:
        TrainingInterrupted: a signal stopped the run (after checkpointing it).
        WorkerError: a vectorizer worker died or hung; once an update has finished, the last
            one is checkpointed first and the message says where.
        APIUsageError: `config` given with `config_file` or `overrides`, or those given with
            a vecenv (they resolve an env name's config).
        ConfigError: a bad key or value in `config_file` or `overrides`.

    Example:
        >>> import tempfile
        >>> from puffer.train import Config, TrainConfig, VecConfig
        >>> config = Config(
        ...     train=TrainConfig(total_timesteps=256, horizon=16, minibatch_size=64,
        ...                       device="cpu", data_dir=tempfile.mkdtemp()),
        ...     vec=VecConfig(backend="serial", num_instances=4))
        >>> train("gym-CartPole-v1", config).global_step
        256
    """
    config = _resolve(env, config, config_file, overrides)
    check_limits(config)  # sizes past any machine's fail here, before envs or tensors exist
    cfg = config.train
    cfg.check_host()  # a missing GPU or an unwritable data_dir fails before any env exists
    distributed.init_from_env(cfg.device)
    rank, _ = distributed.rank_and_world()
    _seed_everything(cfg.seed + rank)
    apply_torch_settings(config)  # before the policy is built
    # From here on a signal waits for the end of the first iteration and its checkpoint (a slow
    # start, e.g. envs still being built, does not lose the signal).
    with _StopSignals() as stop, contextlib.ExitStack() as held:
        owns_env = isinstance(env, str)
        name = env if isinstance(env, str) else env_name or type(env).__name__
        # The run dir first: a run id that is taken (or a full disk) fails before envs exist.
        paths = None
        if rank == 0:
            paths = ckpt.make_run_dir(config, name, _shipped(env))
            held.callback(ckpt.release_run_dir, paths)  # the run dir is this run's until it ends
            # The run's own config names its directory; the caller's is left as it was.
            config = ckpt.run_config(config, paths.run_id)
            cfg = config.train
        elif cfg.run_id:
            paths = RunPaths(cfg.data_dir, name, cfg.run_id)
        resumed = ckpt.load(paths.checkpoint) if cfg.resume and paths is not None else None
        score = RunScore(cfg.score_stat)
        if rank == 0 and paths is not None and resumed is not None:
            # Iterations logged after the checkpoint are trained (and logged) again; the score's
            # window goes on from the iterations logged before the stop.
            for row in _truncate_metrics(paths, resumed["trainer"]["global_step"]):
                score.update({k: v for k, v in row.items() if isinstance(v, float | int)})
        vecenv = make_vecenv(env, config) if isinstance(env, str) else env
        trainer = None
        display: list[MetricsSink] = []
        try:
            policy = policy if policy is not None else make_policy(config.policy, vecenv)
            run_dir = paths.root if paths is not None else None
            display = (
                _display(dashboard, progress, progress_label or name, score) if rank == 0 else []
            )
            all_sinks = _sinks(sinks, paths if rank == 0 else None, name, config, display)
            trainer = PuffeRL(
                config, vecenv, policy, sinks=[ScoredSinks(all_sinks, score)], run_dir=run_dir
            )
            if resumed is not None:
                trainer.load_state_dict(resumed)
            note = budget_note(trainer.sizes, cfg.total_timesteps, trainer.world_size)
            if note is not None and notify is not None and rank == 0:
                notify(note)
            metrics = _train_iterations(trainer, stop, paths)
            if run_dir is not None:
                trainer.save_checkpoint()
            return TrainResult(
                run_dir,
                trainer.global_step,
                trainer.iteration,
                metrics,
                score.value,
                score.stat,
                score.episodes,
                score.means(),
                policy,
            )
        finally:
            if trainer is not None:
                trainer.close()
            else:
                for sink in display:  # the trainer closes them, once there is one
                    sink.close()
            if owns_env:
                vecenv.close()


def budget_note(sizes: Sizes, total_timesteps: int, world_size: int = 1) -> str | None:
    """The line that says a budget of `total_timesteps` is trained as whole iterations of
    `sizes.batch_size` agent steps (per rank), and how many steps that makes; None when the
    budget is a whole number of iterations already. An iteration is never cut short: its update
    reads the whole batch, and the batch is the config's, not the budget's.

    Example:
        >>> from puffer.train import TrainConfig
        >>> from puffer.train.config import Sizes
        >>> sizes = Sizes.derive(TrainConfig(horizon=32, total_timesteps=100), num_agents=8)
        >>> budget_note(sizes, 100).split("; ")[0]
        'train.total_timesteps 100 is less than one batch of 256 agent steps (8 agents x horizon 32)'
        >>> budget_note(sizes, 512) is None
        True
    """
    per_iteration = sizes.batch_size * world_size
    trained = sizes.iterations * per_iteration
    if trained == total_timesteps:
        return None
    parts = []
    if sizes.batch_size == sizes.num_agents * sizes.horizon:
        parts.append(f"{sizes.num_agents} agents x horizon {sizes.horizon}")
    if world_size > 1:
        parts.append(f"over {world_size} ranks")
    batch = f"{per_iteration:,} agent steps" + (f" ({', '.join(parts)})" if parts else "")
    iterations = f"{sizes.iterations} iteration{'s' * (sizes.iterations != 1)} = {trained:,} steps"
    budget = f"train.total_timesteps {total_timesteps:,}"
    if total_timesteps < per_iteration:
        return (
            f"{budget} is less than one batch of {batch}; training {iterations} (for fewer, lower "
            "train.horizon or the env's agents)"
        )
    return (
        f"{budget} is not a whole number of batches of {batch}; training {iterations}, rounded up"
    )


def _truncate_metrics(paths: RunPaths, last_step: float) -> list[dict[str, Any]]:
    """Drop the metrics rows a resumed run logs again (after its checkpoint's step), warning
    about lines that were no rows at all; returns the rows kept."""
    found = truncate_jsonl(paths.metrics, last_step)
    if found.skipped:
        warnings.warn(
            f"{paths.metrics}: skipped {found.skipped} line(s) that are not metrics rows (not "
            "UTF-8, not a JSON object, or no finite step); they are left out of the file",
            RuntimeWarning,
            stacklevel=3,
        )
    return found.rows


def _display(
    dashboard: bool, progress: float | None, label: str, score: RunScore
) -> list[MetricsSink]:
    """What shows the run as it goes: the rich dashboard and/or plain progress lines."""
    shown: list[MetricsSink] = []
    if dashboard:
        from puffer.train.dashboard import Dashboard

        shown.append(Dashboard(label, score=score))
    if progress is not None:
        from puffer.train.progress import ProgressLines

        shown.append(ProgressLines(sys.stdout, progress, label, score))
    return shown


def _resolve(
    env: str | Any, config: Config | None, config_file: str | Path | None, overrides: Sequence[str]
) -> Config:
    """The run's config: `config` as given, else the env name's resolved config."""
    layered = config_file is not None or bool(overrides)
    if config is not None and layered:
        raise APIUsageError(
            "train() got a config and config_file/overrides; pass the config alone, or leave "
            "it out to resolve the env's own with the file and overrides on top"
        )
    if config is not None:
        return config
    if isinstance(env, str):
        return load_config(env, config_file, overrides)
    if layered:
        raise APIUsageError(
            f"train() got config_file/overrides with the vecenv {env!r}; they resolve a "
            "registered env's config: pass its name, or pass a Config"
        )
    return Config()


def _shipped(env: str | Any) -> Config | None:
    """The env's shipped config (`puffer config ENV` with no flags), which the dashboard diffs
    the run against; None for an env object, or a name whose shipped config does not load (a
    config passed in Python trains all the same: this is for display only)."""
    if not isinstance(env, str):
        return None
    try:
        return load_config(env)
    except PufferError:
        return None


def _sinks(
    extra: list[MetricsSink] | None,
    paths: RunPaths | None,
    name: str,
    config: Config,
    display: list[MetricsSink],
) -> list[MetricsSink]:
    """The JSONL file (when there is a run directory), `extra`, the display, TensorBoard (if
    `train.tensorboard`) and wandb (if `train.wandb`)."""
    sinks = list(extra or [])
    if paths is None:
        return sinks
    sinks.insert(0, JSONLSink(paths.metrics))
    sinks += display
    if config.train.tensorboard:
        from puffer.train.tensorboard_sink import TensorBoardSink

        sinks.append(TensorBoardSink(paths.root / "tensorboard", config))
    if config.train.wandb:
        from puffer.train.wandb_sink import WandbSink

        sinks.append(WandbSink(config, name, paths.root))
    return sinks


def _train_iterations(trainer: PuffeRL, stop: _StopSignals, paths: RunPaths | None) -> dict:
    """Iterations until the end, checkpointing every `checkpoint_interval` iterations, once
    `checkpoint_minutes` passed since the last checkpoint, and when a signal asked to stop;
    returns the last iteration's metrics."""
    interval = trainer.config.train.checkpoint_interval
    seconds = 60 * trainer.config.train.checkpoint_minutes
    metrics: dict[str, float] = {}
    last_save = time.monotonic()
    finished = None  # global_step after this process's last update
    while trainer.iteration < trainer.sizes.iterations:
        try:
            trainer.collect()
        except WorkerError as error:
            if paths is None or finished is None or trainer.rank != 0:
                raise  # no update since the run (or resume) began: its checkpoint is current
            raise _checkpointed(trainer, paths, finished, error) from error
        trainer.train()
        metrics = trainer.mean_and_log()
        finished = trainer.global_step
        signum = stop.requested(trainer.device)
        if signum is not None:
            if paths is not None:
                trainer.save_checkpoint()
            raise TrainingInterrupted(signum, paths, trainer.global_step)
        due = interval > 0 and trainer.iteration % interval == 0
        # Under DDP the ranks' clocks differ, but only rank 0 writes (save_checkpoint).
        due = due or (seconds > 0 and time.monotonic() - last_save >= seconds)
        if paths is not None and due:
            trainer.save_checkpoint()
            last_save = time.monotonic()
    return metrics


def _checkpointed(
    trainer: PuffeRL, paths: RunPaths, finished: int, error: WorkerError
) -> WorkerError:
    """Checkpoint the last finished update after a vectorizer worker died during a rollout, and
    return `error` with a note saying where it is.

    The rollout in progress is discarded: it only read the policy and optimizer, so they are as
    the last `train()` left them, and the step count goes back to that update's (`finished`).
    The vectorizer cannot save its envs (none of its backends can): a resume resets them with
    the run's next seed, as after any checkpoint of Python envs.
    """
    trainer.global_step = finished
    try:
        trainer.save_checkpoint()
        note = (
            f"checkpoint {paths.checkpoint} holds step {finished:,}, the last finished update "
            "(the iteration in progress is lost): resume it with --train.resume true"
        )
    except StorageError as failed:
        note = f"the checkpoint of step {finished:,} could not be written: {failed}"
    tail = f"\n{error.remote_traceback}" if error.remote_traceback else ""
    message = str(error).removesuffix(tail)
    return WorkerError(f"{message}; {note}", error.worker, error.remote_traceback)
