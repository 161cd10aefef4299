"""TensorBoard as a metrics sink (the `tensorboard` extra), through `torch.utils.tensorboard`.

Chosen with `train.tensorboard = true`: the run then writes event files to
`<run dir>/tensorboard/`, which `tensorboard --logdir <data_dir>` shows beside other runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from puffer.core import APIUsageError
from puffer.train.config import Config

__all__ = ["TensorBoardSink"]


class TensorBoardSink:
    """Writes each iteration's metrics as TensorBoard scalars at `step` (agent steps).

    Args:
        log_dir: the event files' directory (created if missing).
        config: the run config, stored once as a text summary named "config".

    Raises:
        APIUsageError: the tensorboard package is not installed.

    Example:
        >>> import tempfile
        >>> sink = TensorBoardSink(tempfile.mkdtemp())
        >>> sink.log({"losses/policy": 0.5, "env/score": 10.0}, step=2048)
        >>> sink.close()
    """

    def __init__(self, log_dir: str | Path, config: Config | None = None):
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as error:
            raise APIUsageError(
                "TensorBoard logging needs the tensorboard package; install "
                "puffer-train[tensorboard] or set train.tensorboard = false"
            ) from error
        self._writer = SummaryWriter(log_dir=str(log_dir))
        if config is not None:
            # Markdown code block, so TensorBoard's text tab keeps the indentation.
            text = json.dumps(config.to_dict(), indent=2, default=str)
            self._writer.add_text("config", "```\n" + text + "\n```", 0)
        self.closed = False

    @property
    def log_dir(self) -> str:
        """Where the event files go."""
        return self._writer.log_dir

    def log(self, metrics: dict[str, float], step: int) -> None:
        for name, value in metrics.items():
            self._writer.add_scalar(name, value, step)

    def close(self) -> None:
        """Flush and close the event file. Idempotent."""
        if not self.closed:
            self.closed = True
            self._writer.close()
