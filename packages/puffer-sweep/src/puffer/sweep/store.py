"""The sweep store: one JSON line per finished run, appended and fsynced as each run ends.

Line 1 is a header naming the searched parameters; each later line is a `RunRecord`: the run's
wall-clock cost, its CPU seconds and agent steps (lines of older stores lack the last two and
read as None), score, params and curve. A sweep
killed at any moment loses at most the runs in flight: on restart the store is read back, its runs
replayed into the method, and the sweep goes on. A last line cut short by the kill is ignored.

The store is opened with O_NOFOLLOW (a symlink planted under its name is refused, never written
through), and a line no sweep wrote (not UTF-8, not an object, a field RunRecord lacks) is one
`SweepStoreError` naming the line.
"""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Literal

from puffer.sweep.errors import SweepStoreError
from puffer.sweep.space import Params

__all__ = ["COST_KINDS", "CostKind", "RunRecord", "SweepStore"]

CostKind = Literal["wall", "cpu", "steps"]
"""What a run's cost counts: wall-clock seconds, CPU seconds or agent steps."""
COST_KINDS: tuple[CostKind, ...] = ("wall", "cpu", "steps")

_FORMAT = "puffer-sweep/1"
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class RunRecord:
    """One finished run.

    Attributes:
        run_id: Position of the run in the sweep, from 0.
        params: The suggestion the run trained with.
        score: The metric reached; None for a failed run.
        cost: What the run cost: its wall-clock seconds, unless the objective reports its
            own cost (the sweep's cost "wall").
        status: "ok", or "failed" for a run that raised, died or returned NaN.
        error: The failure's traceback or reason; "" for a run that succeeded.
        curve: Learning-curve points (steps, score, cost), oldest first; empty if none.
        info: Anything else the objective returned (JSON-serializable).
        cpu_seconds: CPU seconds the run took (user + system, its threads and the child
            processes it waited for, e.g. vectorizer workers); None in a store written before
            puffer-sweep recorded it, or when the worker died.
        agent_steps: Agent steps the run trained; None when the objective reported none (nor a
            curve) and in older stores.
    """

    run_id: int
    params: Params
    score: float | None
    cost: float
    status: Literal["ok", "failed"] = "ok"
    error: str = ""
    curve: list[tuple[float, float, float]] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)
    cpu_seconds: float | None = None
    agent_steps: float | None = None

    @property
    def failed(self) -> bool:
        """True for a run that raised, died or returned NaN."""
        return self.status == "failed"

    def cost_as(self, kind: CostKind) -> float | None:
        """The run's cost counted as `kind`: "wall" (`cost`), "cpu" (`cpu_seconds`) or
        "steps" (`agent_steps`); None when the record does not carry it.

        Example:
            >>> RunRecord(0, {}, 1.0, cost=2.0, cpu_seconds=3.5, agent_steps=4096).cost_as("cpu")
            3.5
        """
        return {"wall": self.cost, "cpu": self.cpu_seconds, "steps": self.agent_steps}[kind]


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
        raw = self._read()
        if raw is None or not raw:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write({"format": _FORMAT, "params": list(names)})
            return []
        if not raw.endswith(b"\n"):
            # A kill cut the last write short: drop the partial line so appends start clean.
            raw = raw[: raw.rfind(b"\n") + 1]
            fd = self._open(os.O_WRONLY)
            try:
                os.ftruncate(fd, len(raw))
            finally:
                os.close(fd)
        try:
            lines = raw.decode("utf-8").splitlines()
        except UnicodeDecodeError as error:
            line = raw[: error.start].count(b"\n") + 1
            raise SweepStoreError(
                f"{self!r}: line {line} is not UTF-8, so no sweep wrote it; pass a new store "
                "path, or remove that line"
            ) from None
        if not lines:
            self._write({"format": _FORMAT, "params": list(names)})
            return []
        header = self._parse(lines[0], 1, last=len(lines) == 1)
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise SweepStoreError(
                f"{self!r}: line 1 is not a {_FORMAT} header; pass a new store path"
            )
        if header.get("params") != list(names):
            raise SweepStoreError(
                f"{self!r} holds a sweep over {header.get('params')}, not {list(names)}; pass a "
                "new store path, or the same [sweep] parameters to resume it"
            )
        records = []
        for number, line in enumerate(lines[1:], start=2):
            data = self._parse(line, number, last=number == len(lines))
            if data is not None:
                records.append(self._record(data, number))
        return records

    def _record(self, data: object, number: int) -> RunRecord:
        """Line `number`'s `RunRecord`, or `SweepStoreError` naming what no sweep writes."""
        known = {f.name for f in fields(RunRecord)}
        if not isinstance(data, dict):
            problem = f"a {type(data).__name__}, not an object"
        elif unknown := sorted(set(data) - known):
            problem = f"fields a run record lacks: {unknown}"
        else:
            try:
                data["curve"] = [tuple(p) for p in data.get("curve", [])]
                return RunRecord(**data)
            except TypeError as error:
                problem = str(error)
        raise SweepStoreError(
            f"{self!r}: line {number} is no run record ({problem}), so no sweep wrote it; "
            "pass a new store path, or remove that line"
        )

    def _open(self, flags: int) -> int:
        """An fd of the store, never through a symlink."""
        try:
            return os.open(self.path, flags | _NOFOLLOW, 0o644)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SweepStoreError(
                    f"{self!r} is a symlink (to {os.readlink(self.path)}); a sweep writes no "
                    "store through a symlink: remove it, or pass a new store path"
                ) from None
            raise

    def _read(self) -> bytes | None:
        """The store's bytes, or None when there is none."""
        try:
            fd = self._open(os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def append(self, record: RunRecord) -> None:
        """Appends one run and forces it to disk (flush + fsync) before returning."""
        data = asdict(record)
        if data["score"] is not None and not math.isfinite(data["score"]):
            data["score"] = None
        self._write(data)

    def _write(self, data: dict[str, object]) -> None:
        line = (json.dumps(data, allow_nan=False, default=repr) + "\n").encode()
        fd = self._open(os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        with os.fdopen(fd, "ab", buffering=0) as f:
            size = os.fstat(fd).st_size
            try:
                while line:  # a full disk may take part of the line before it refuses the rest
                    line = line[f.write(line) :]
                os.fsync(fd)
            except OSError as error:
                # Cut the part written: the store keeps every whole line it had, and nothing else.
                os.ftruncate(fd, size)
                raise SweepStoreError(
                    f"cannot append to {self!r}: {error.strerror or error}; it holds the runs "
                    "stored before, whole: free some space and run the sweep again to go on"
                ) from None

    def _parse(self, line: str, number: int, *, last: bool) -> dict | None:
        try:
            return json.loads(line)
        except RecursionError:
            raise SweepStoreError(
                f"{self!r}: line {number} nests too deep to be a run record, so no sweep wrote "
                "it: remove that line"
            ) from None
        except json.JSONDecodeError as e:
            if last:  # the write a kill cut short; that run is simply run again
                return None
            raise SweepStoreError(
                f"{self!r}: line {number} is not valid JSON ({e}); only the last line may be "
                "cut short by a kill, so the file was edited: fix or remove that line"
            ) from e
