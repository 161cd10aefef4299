"""Metric sinks: the trainer emits one flat `{name: float}` dict per iteration to each sink.

A sink is anything with `log(metrics, step)` and `close()`. This module holds the interface and
the JSONL file sink; the rich dashboard and wandb sinks live in their own modules so the trainer
never imports either library. Its readers hand every row on with the metric names of today
(`RENAMED_METRICS`), so the files of older runs read as new ones do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from puffer.train.storage import atomic_write, open_append, writing

__all__ = [
    "RENAMED_METRICS",
    "JSONLSink",
    "MetricsRows",
    "MetricsSink",
    "parse_metrics",
    "read_jsonl",
    "read_metrics",
    "truncate_jsonl",
]


# Metric names renamed since runs first logged them, old: new. "epoch" counted iterations (one
# collect and one update), now apart from `update_epochs` (passes over each batch); the files a
# run wrote before keep the old names, which every reader here renames.
RENAMED_METRICS = {
    "performance/epoch": "performance/iteration",
    "performance/epochs": "performance/iterations",
}


@runtime_checkable
class MetricsSink(Protocol):
    """Receives the trainer's per-iteration metrics."""

    def log(self, metrics: dict[str, float], step: int) -> None:
        """Record `metrics` (flat, `section/name` keys) at agent step `step`."""

    def close(self) -> None:
        """Flush and release resources. Idempotent."""


class JSONLSink:
    """Appends one JSON object per iteration (`{"step": ..., **metrics}`) to `path`.

    Appending keeps a resumed run's history in the same file; the file is never opened through
    a symlink (`open_append`). Non-finite floats are written as null so every line stays valid
    JSON. Each row goes to the file in one unbuffered write, so
    a failed write raises at once (`StorageError`) and `close()` has nothing left to flush.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        with writing(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open_append(self.path)

    def log(self, metrics: dict[str, float], step: int) -> None:
        row = {"step": step}
        for key, value in metrics.items():
            row[key] = value if math.isfinite(value) else None
        data = memoryview((json.dumps(row) + "\n").encode())
        with writing(self.path):
            while data:  # a full disk may take part of the row before it refuses the rest
                data = data[self._file.write(data) :]

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True)
class MetricsRows:
    """What `read_metrics` found in a metrics file.

    Attributes:
        rows: the complete rows, in order: JSON objects whose "step" is a finite number.
        skipped: complete lines that are not such rows (not UTF-8, not JSON, not an object,
            a step that is missing, not a number or not finite), left out of `rows`.
    """

    rows: list[dict[str, Any]]
    skipped: int


def _lines(data: bytes) -> Iterator[tuple[bytes, dict[str, Any] | None]]:
    """Each complete non-blank line of `data` with its row, or None where it holds none.

    The bytes after the last newline are left out: the row a running trainer is appending (a
    reader can see part of that write) or one a kill cut short.
    """
    for line in data.split(b"\n")[:-1]:
        if not line.strip():
            continue
        try:
            row = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            row = None  # RecursionError: nested too deep for json, so no trainer wrote it
        if not isinstance(row, dict) or not _finite_number(row.get("step")):
            row = None
        yield line, row if row is None else _renamed(row)


def _renamed(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its metrics under today's names (`RENAMED_METRICS`); a row written under both
    keeps the new one."""
    if not RENAMED_METRICS.keys() & row.keys():
        return row
    return {
        RENAMED_METRICS.get(key, key): value
        for key, value in row.items()
        if not (key in RENAMED_METRICS and RENAMED_METRICS[key] in row)
    }


def _finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_metrics(data: bytes) -> MetricsRows:
    """The rows in the bytes of a metrics file, and how many complete lines were not rows."""
    pairs = list(_lines(data))
    rows = [row for _, row in pairs if row is not None]
    return MetricsRows(rows, len(pairs) - len(rows))


def read_metrics(path: str | Path) -> MetricsRows:
    """The rows of a metrics file, and how many complete lines were not rows.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "metrics.jsonl"
        >>> _ = path.write_bytes(b'{"step": 1}\\n[1, 2]\\n{"step": "abc"}\\n\\xff\\n{"step": 2}\\n{"st')
        >>> found = read_metrics(path)
        >>> [row["step"] for row in found.rows], found.skipped
        ([1, 2], 3)
    """
    return parse_metrics(Path(path).read_bytes())


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The complete rows of a metrics file, in order (`read_metrics(path).rows`)."""
    return read_metrics(path).rows


def truncate_jsonl(path: str | Path, last_step: float) -> MetricsRows:
    """Keep only the rows logged up to `last_step` (a resumed run logs later iterations again).

    Dropped as well: a last line cut short by a kill, and lines that are not rows (see
    `MetricsRows.skipped`), which a resumed run would otherwise keep tripping over. The file
    is rewritten atomically; a missing file is left missing.

    Returns:
        the rows kept, and the count of lines skipped as not rows.

    Raises:
        StorageError: the file could not be rewritten (a full disk); it is left as it was.
    """
    path = Path(path)
    if not path.is_file():
        return MetricsRows([], 0)
    data = path.read_bytes()
    pairs = list(_lines(data))
    kept = [(line, row) for line, row in pairs if row is not None and row["step"] <= last_step]
    text = b"".join(line + b"\n" for line, _ in kept)
    if text != data:
        atomic_write(path, lambda file: file.write(text))
    skipped = sum(row is None for _, row in pairs)
    return MetricsRows([row for _, row in kept], skipped)
