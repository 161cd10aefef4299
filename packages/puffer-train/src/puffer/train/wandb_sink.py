"""Weights & Biases as a metrics sink (the `wandb` extra).

Chosen with `train.wandb = true` (`puffer train ENV --wandb`): the run is named after the env
and its run id, its wandb files land in `<run dir>/wandb/` (not the current directory), and
`train.wandb_project`, `wandb_entity`, `wandb_group` and `wandb_tags` place it. A resumed run
continues the same wandb run (its id is the run id). `WANDB_MODE=offline` needs no account.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from puffer.core import APIUsageError
from puffer.train.config import Config

__all__ = ["WandbSink"]


class WandbSink:
    """Logs each iteration's metrics to a wandb run whose config is the resolved run config.

    Args:
        config: the run config (stored as the wandb config; `train.wandb_*` place the run).
        env_name: part of the run name, and the group when `train.wandb_group` is empty.
        run_dir: the run directory; wandb writes its files into `run_dir/wandb/`.

    Raises:
        APIUsageError: wandb is not installed.
    """

    def __init__(self, config: Config, env_name: str, run_dir: str | Path):
        try:
            import wandb
        except ImportError as error:
            raise APIUsageError(
                "wandb logging needs the wandb package; install puffer-train[wandb] or set "
                "train.wandb = false"
            ) from error
        cfg = config.train
        run_dir = Path(run_dir)
        run_id = run_dir.name
        self._run = wandb.init(
            project=cfg.wandb_project,
            entity=cfg.wandb_entity or None,
            group=cfg.wandb_group or env_name,
            tags=[tag.strip() for tag in cfg.wandb_tags.split(",") if tag.strip()] or None,
            name=f"{env_name}-{run_id}",
            id=_wandb_id(env_name, run_id),
            resume="allow",
            config=config.to_dict(),
            dir=str(run_dir),
        )
        self.closed = False

    @property
    def run(self) -> Any:
        """The underlying `wandb.Run`."""
        return self._run

    def log(self, metrics: dict[str, float], step: int) -> None:
        self._run.log({**metrics, "global_step": step}, step=step)

    def log_video(self, path: str | Path, fps: int) -> None:
        """Attach a video file (GIF or MP4) to the run as `eval/video`."""
        import wandb

        self._run.log({"eval/video": wandb.Video(str(path), fps=fps)})

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._run.finish()


def _wandb_id(env_name: str, run_id: str) -> str:
    """A wandb run id (letters, digits, '-', '_') unique per env and run."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{env_name}-{run_id}")
