"""The run layout: where a run's files live, spelled once.

    <data_dir>/<env, "/" and ":" -> "_">/<run_id>/
        config.json     the resolved `puffer.train.Config` (written when the run starts)
        defaults.json   the env's shipped config, `puffer config ENV` with no flags (the
                        dashboard's "config off its defaults" is config.json against it)
        config.toml     the resolved CLI config (`puffer train` writes it; `--config` reloads it)
        checkpoint.pt   model, optimizer, trainer state, RNG streams, env state (atomic)
        metrics.jsonl   one JSON object per iteration, appended across resumes
        .lock           held (flock) by the one process training in the directory
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

from puffer.core import APIUsageError

__all__ = ["MAX_NAME", "RunPaths", "check_name"]

# Bytes in a run id or sweep name: one directory name (255 on most file systems), with room
# for the "sweep-" prefix and the temp files written beside it.
MAX_NAME = 200


def check_name(what: str, name: str) -> str:
    """`name` when it names one directory level (a run id, a sweep name); else `APIUsageError`.

    Example:
        >>> check_name("--name", "lr-search")
        'lr-search'
    """
    if "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        problem = "it holds '/', '\\' or a NUL, or is '.' or '..', so it would leave its folder"
    elif len(name.encode()) > MAX_NAME:
        problem = f"it is {len(name.encode())} bytes long, past the {MAX_NAME} a name may have"
    else:
        return name
    raise APIUsageError(
        f"{what} {name[:60]!r}{'...' if len(name) > 60 else ''} is refused: {problem}; name one "
        "directory, e.g. letters, digits, '-' and '_'"
    )


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
    DEFAULTS = "defaults.json"
    CHECKPOINT = "checkpoint.pt"
    LOCK = ".lock"
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
    def defaults(self) -> Path:
        return self.root / self.DEFAULTS

    @property
    def config_toml(self) -> Path:
        return self.root / self.CONFIG_TOML

    @property
    def checkpoint(self) -> Path:
        return self.root / self.CHECKPOINT

    @property
    def lock(self) -> Path:
        return self.root / self.LOCK

    @property
    def metrics(self) -> Path:
        return self.root / self.METRICS

    @property
    def video(self) -> Path:
        return self.root / self.VIDEO
