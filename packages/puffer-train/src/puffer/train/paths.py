"""The run layout: where a run's files live, spelled once.

    <data_dir>/<env, "/" and ":" -> "_">/<run_id>/
        config.json     the resolved `puffer.train.Config` (written when the run starts)
        config.toml     the resolved CLI config (`puffer train` writes it; `--config` reloads it)
        checkpoint.pt   model, optimizer, trainer state, RNG streams, env state (atomic)
        metrics.jsonl   one JSON object per epoch, appended across resumes
        eval.gif        `puffer eval`'s latest video (a copy when --video wrote one
                        elsewhere): the one the dashboard shows
        tensorboard/    event files (train.tensorboard)
        wandb/          wandb's files (train.wandb)
    <data_dir>/<env>/sweep-<name>/   a sweep's store and its runs

Every module that names one of these paths asks `RunPaths`; none joins them itself.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunPaths"]


@dataclass(frozen=True)
class RunPaths:
    """The directory of one run and the names inside it.

    Args:
        data_dir: root of all runs (`train.data_dir`).
        env: the env name as the user spells it (e.g. "breakout", "ALE/Pong-v5").
        run_id: the run's directory name (`train.run_id`).

    Example:
        >>> paths = RunPaths("experiments", "ALE/Pong-v5", "r1")
        >>> paths.root.as_posix(), paths.checkpoint.name
        ('experiments/ALE_Pong-v5/r1', 'checkpoint.pt')
    """

    data_dir: str | Path
    env: str
    run_id: str

    CONFIG = "config.json"
    CONFIG_TOML = "config.toml"
    CHECKPOINT = "checkpoint.pt"
    METRICS = "metrics.jsonl"
    VIDEO = "eval.gif"

    @staticmethod
    def env_dir(data_dir: str | Path, env: str) -> Path:
        """`<data_dir>/<env>/`: the runs (and sweeps) of one env; "/" in names (`ALE/Pong-v5`)
        and ":" (`gym-minigrid:MiniGrid-Empty-5x5-v0`, which path lists would split) become
        "_"."""
        return Path(data_dir) / env.replace("/", "_").replace(":", "_")

    @staticmethod
    def new_run_id() -> str:
        """A fresh, time-stamped run id (`YYYYmmdd-HHMMSS-<pid>`)."""
        return time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"

    @classmethod
    def sweep_dir(cls, data_dir: str | Path, env: str, name: str) -> Path:
        """`<data_dir>/<env>/sweep-<name>/`: one sweep's store, config and runs."""
        return cls.env_dir(data_dir, env) / f"sweep-{name}"

    @classmethod
    def latest(cls, data_dir: str | Path, env: str) -> RunPaths | None:
        """The run of `env` whose checkpoint was written last, or None when there is none."""
        found = cls.env_dir(data_dir, env).glob(f"*/{cls.CHECKPOINT}")
        newest = max(found, key=lambda p: p.stat().st_mtime, default=None)
        return None if newest is None else cls(data_dir, env, newest.parent.name)

    @property
    def root(self) -> Path:
        """The run directory."""
        return self.env_dir(self.data_dir, self.env) / self.run_id

    @property
    def config(self) -> Path:
        return self.root / self.CONFIG

    @property
    def config_toml(self) -> Path:
        return self.root / self.CONFIG_TOML

    @property
    def checkpoint(self) -> Path:
        return self.root / self.CHECKPOINT

    @property
    def metrics(self) -> Path:
        return self.root / self.METRICS

    @property
    def video(self) -> Path:
        return self.root / self.VIDEO
