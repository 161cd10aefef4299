"""Weights & Biases as a metrics sink (the `wandb` extra). `WANDB_MODE=offline` needs no
account and writes the run under `./wandb/` (or `dir`)."""

from __future__ import annotations

from typing import Any

from puffer.core import APIUsageError
from puffer.train.config import Config

__all__ = ["WandbSink"]


class WandbSink:
    """Logs each epoch's metrics to a wandb run whose config is the resolved run config.

    Args:
        config: the run config (stored as the wandb config).
        env_name: the wandb group and part of the run name.
        project: wandb project.
        dir: where wandb writes its files (default: wandb's own default).
        **init_kwargs: passed to `wandb.init`.

    Raises:
        APIUsageError: wandb is not installed.
    """

    def __init__(
        self,
        config: Config,
        env_name: str,
        project: str = "puffer",
        dir: str | None = None,
        **init_kwargs: Any,
    ):
        try:
            import wandb
        except ImportError as error:
            raise APIUsageError(
                "wandb logging needs the wandb package; install puffer-train[wandb]"
            ) from error
        self._run = wandb.init(
            project=project,
            group=env_name,
            name=f"{env_name}-{config.train.run_id}" if config.train.run_id else None,
            config=config.to_dict(),
            dir=dir,
            **init_kwargs,
        )
        self.closed = False

    @property
    def run(self) -> Any:
        """The underlying `wandb.Run`."""
        return self._run

    def log(self, metrics: dict[str, float], step: int) -> None:
        self._run.log({**metrics, "global_step": step}, step=step)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._run.finish()
