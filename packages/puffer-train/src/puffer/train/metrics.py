"""Metric sinks: the trainer emits one flat `{name: float}` dict per epoch to each sink.

A sink is anything with `log(metrics, step)` and `close()`. This module holds the interface and
the JSONL file sink; the rich dashboard and wandb sinks live in their own modules so the trainer
never imports either library.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Protocol, runtime_checkable

from puffer.train.checkpoint import atomic_write

__all__ = ["JSONLSink", "MetricsSink", "read_jsonl", "truncate_jsonl"]


@runtime_checkable
class MetricsSink(Protocol):
    """Receives the trainer's per-epoch metrics."""

    def log(self, metrics: dict[str, float], step: int) -> None:
        """Record `metrics` (flat, `section/name` keys) at agent step `step`."""

    def close(self) -> None:
        """Flush and release resources. Idempotent."""


class JSONLSink:
    """Appends one JSON object per epoch (`{"step": ..., **metrics}`) to `path`.

    Appending keeps a resumed run's history in the same file. Non-finite floats are written as
    null so every line stays valid JSON.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")

    def log(self, metrics: dict[str, float], step: int) -> None:
        row = {"step": step}
        for key, value in metrics.items():
            row[key] = value if math.isfinite(value) else None
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def read_jsonl(path: str | Path) -> list[dict[str, float]]:
    """The complete rows of a metrics file, in order.

    A last line without its newline is left out: it is the row a running trainer is appending
    (a reader can see part of that write) or one a kill cut short.
    """
    lines = Path(path).read_text(encoding="utf-8").split("\n")[:-1]
    return [json.loads(line) for line in lines if line.strip()]


def truncate_jsonl(path: str | Path, last_step: int) -> int:
    """Drop the rows logged after `last_step` (a resumed run logs those epochs again), and a
    last line cut short by a kill.

    The file is rewritten atomically; a missing file is left missing.

    Returns:
        the number of rows dropped.
    """
    path = Path(path)
    if not path.is_file():
        return 0
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    kept = [line for line in lines if _step(line) <= last_step]
    if len(kept) < len(lines):
        text = "".join(line + "\n" for line in kept)
        atomic_write(path, lambda file: file.write(text.encode()))
    return len(lines) - len(kept)


def _step(line: str) -> float:
    try:
        return json.loads(line)["step"]
    except (json.JSONDecodeError, KeyError, TypeError):
        return math.inf
