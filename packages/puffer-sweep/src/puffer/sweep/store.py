"""The sweep store: one JSON line per finished run, appended and fsynced as each run ends.

Line 1 is a header naming the searched parameters; each later line is a `RunRecord`. A sweep
killed at any moment loses at most the runs in flight: on restart the store is read back, its runs
replayed into the method, and the sweep goes on. A last line cut short by the kill is ignored.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from puffer.sweep.errors import SweepStoreError
from puffer.sweep.space import Params

__all__ = ["RunRecord", "SweepStore"]

_FORMAT = "puffer-sweep/1"


@dataclass
class RunRecord:
    """One finished run.

    Attributes:
        run_id: Position of the run in the sweep, from 0.
        params: The suggestion the run trained with.
        score: The metric reached; None for a failed run.
        cost: What the run cost (seconds unless the objective reports its own cost).
        status: "ok", or "failed" for a run that raised, died or returned NaN.
        error: The failure's traceback or reason; "" for a run that succeeded.
        curve: Learning-curve points (steps, score, cost), oldest first; empty if none.
        info: Anything else the objective returned (JSON-serializable).
    """

    run_id: int
    params: Params
    score: float | None
    cost: float
    status: Literal["ok", "failed"] = "ok"
    error: str = ""
    curve: list[tuple[float, float, float]] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """True for a run that raised, died or returned NaN."""
        return self.status == "failed"


class SweepStore:
    """Append-only JSONL record of a sweep, from which a killed sweep resumes.

    Args:
        path: The ``.jsonl`` file; created with its folder when missing.

    Example:
        >>> import tempfile
        >>> store = SweepStore(Path(tempfile.mkdtemp()) / "sweep.jsonl")
        >>> store.open(["lr"])
        []
        >>> store.append(RunRecord(0, {"lr": 0.01}, score=1.5, cost=2.0))
        >>> [r.score for r in store.open(["lr"])]
        [1.5]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"SweepStore({str(self.path)!r})"

    def open(self, names: Sequence[str]) -> list[RunRecord]:
        """Reads the runs already stored, writing the header first if the store is new.

        Args:
            names: The sweep's parameter names, checked against the header.

        Returns:
            The stored runs, in the order they finished.

        Raises:
            SweepStoreError: If the store belongs to a sweep over other parameters, or a line
                other than the last is not valid JSON.
        """
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write({"format": _FORMAT, "params": list(names)})
            return []
        raw = self.path.read_bytes()
        if not raw.endswith(b"\n"):
            # A kill cut the last write short: drop the partial line so appends start clean.
            raw = raw[: raw.rfind(b"\n") + 1]
            with self.path.open("r+b") as f:
                f.truncate(len(raw))
        lines = raw.decode().splitlines()
        if not lines:
            self._write({"format": _FORMAT, "params": list(names)})
            return []
        header = self._parse(lines[0], 1, last=len(lines) == 1)
        if header is None or header.get("format") != _FORMAT:
            raise SweepStoreError(
                f"{self!r}: line 1 is not a {_FORMAT} header; pass a new store path"
            )
        if header["params"] != list(names):
            raise SweepStoreError(
                f"{self!r} holds a sweep over {header['params']}, not {list(names)}; pass a new "
                "store path, or the same [sweep] parameters to resume it"
            )
        records = []
        for number, line in enumerate(lines[1:], start=2):
            data = self._parse(line, number, last=number == len(lines))
            if data is not None:
                data["curve"] = [tuple(p) for p in data.get("curve", [])]
                records.append(RunRecord(**data))
        return records

    def append(self, record: RunRecord) -> None:
        """Appends one run and forces it to disk (flush + fsync) before returning."""
        data = asdict(record)
        if data["score"] is not None and not math.isfinite(data["score"]):
            data["score"] = None
        self._write(data)

    def _write(self, data: dict[str, object]) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(data, allow_nan=False, default=repr) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _parse(self, line: str, number: int, *, last: bool) -> dict | None:
        try:
            return json.loads(line)
        except json.JSONDecodeError as e:
            if last:  # the write a kill cut short; that run is simply run again
                return None
            raise SweepStoreError(
                f"{self!r}: line {number} is not valid JSON ({e}); only the last line may be "
                "cut short by a kill, so the file was edited: fix or remove that line"
            ) from e
