"""Metrics files read incrementally: a reload of the dashboard costs what was appended.

A running trainer only appends to `metrics.jsonl` (a resume that drops rows replaces the file
whole, a new inode). So for each file `MetricsTail` keeps what it parsed, keyed by the file's
identity (device, inode), and the file's size and mtime when it last looked:

    same inode, same size and mtime     nothing read
    same inode, grown                   only the bytes after the last complete line parsed
    anything else                       read again from the start

and at most `cap` bytes of rows are kept per file: the first look at a larger file reads only
its newest `cap` bytes, and chunks appended later push the oldest ones out. A run logged past
the cap is drawn from its newest rows, and `MetricsWindow.unread` says how many bytes before
them were left out (the page says so), so memory and time per load stay bounded whatever the
files hold: a 1 GB metrics file costs `cap` bytes once, then what each reload finds appended.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from puffer.train.metrics import parse_metrics
from puffer.view.inside import open_inside

__all__ = ["METRICS_CAP", "MetricsTail", "MetricsWindow"]

# Bytes of one run's metrics kept and parsed: ~30,000 iterations of a typical row, which
# MAX_POINTS thins to a few hundred anyway; far past any run's useful history.
METRICS_CAP = 16 * 2**20


@dataclass(frozen=True)
class MetricsWindow:
    """The rows of one metrics file that a `MetricsTail` holds.

    Attributes:
        rows: complete rows, oldest first (`puffer.train.metrics.MetricsRows.rows`).
        skipped: complete lines in the window that are no rows.
        unread: bytes at the start of the file left out by the cap (0: the whole file).
    """

    rows: list[dict[str, Any]]
    skipped: int
    unread: int


@dataclass
class _File:
    ident: tuple[int, int]
    size: int
    mtime_ns: int
    # Where parsing stops: just past the last complete line (a row being appended waits).
    offset: int
    unread: int
    # False while `offset` may be mid-line: a window cut by the cap starts inside a row.
    aligned: bool
    # (bytes, rows, skipped) per read, oldest first: the cap drops whole chunks.
    chunks: deque[tuple[int, list[dict[str, Any]], int]] = field(default_factory=deque)

    @property
    def kept(self) -> int:
        return sum(size for size, _, _ in self.chunks)


class MetricsTail:
    """What each metrics file under one data dir held when last read, to read only what is new.

    Args:
        cap: Bytes of rows kept per file (see the module docstring).

    Attributes:
        bytes_read: Bytes read from metrics files so far (what a reload cost).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "m.jsonl").write_bytes(b'{"step": 1}\\n{"step": 2}\\n')
        >>> tail = MetricsTail()
        >>> [row["step"] for row in tail.read(root, "m.jsonl").rows], tail.bytes_read
        ([1, 2], 24)
        >>> with (root / "m.jsonl").open("ab") as f:
        ...     _ = f.write(b'{"step": 3}\\n')
        >>> [row["step"] for row in tail.read(root, "m.jsonl").rows], tail.bytes_read
        ([1, 2, 3], 36)
    """

    def __init__(self, cap: int = METRICS_CAP):
        self.cap = cap
        self.bytes_read = 0
        self._files: dict[str, _File] = {}
        # The server answers from several threads; each file's state changes under this.
        self._lock = threading.Lock()

    def read(self, root: Path, relative: str) -> MetricsWindow:
        """The rows of `root/relative` (opened through `puffer.view.inside`: no symlink
        followed); an empty window when there is no such regular file."""
        fd = open_inside(root, relative)
        if fd is None:
            with self._lock:
                self._files.pop(relative, None)
            return MetricsWindow([], 0, 0)
        try:
            with self._lock:
                state = self._update(fd, self._files.get(relative))
                self._files[relative] = state
                rows = [row for _, chunk, _ in state.chunks for row in chunk]
                skipped = sum(count for _, _, count in state.chunks)
                return MetricsWindow(rows, skipped, state.unread)
        finally:
            os.close(fd)

    def _update(self, fd: int, state: _File | None) -> _File:
        info = os.fstat(fd)
        ident = (info.st_dev, info.st_ino)
        same = state is not None and state.ident == ident and info.st_size >= state.offset
        if same and (info.st_size, info.st_mtime_ns) == (state.size, state.mtime_ns):
            return state
        if not same or info.st_size - state.offset > self.cap:
            # A new or replaced file, or more appended than the cap: start at its newest rows.
            start = max(0, info.st_size - self.cap)
            state = _File(ident, 0, 0, start, start, aligned=start == 0)
        data = os.pread(fd, info.st_size - state.offset, state.offset)
        self.bytes_read += len(data)
        if not state.aligned:
            # The bytes up to the window's first newline are the end of a row left out.
            cut = data.find(b"\n") + 1
            data = data[cut:] if cut else b""
            state.unread += cut
            state.offset += cut
            state.aligned = cut > 0
        complete = data[: data.rfind(b"\n") + 1]
        if complete:
            found = parse_metrics(complete)
            state.chunks.append((len(complete), found.rows, found.skipped))
            state.offset += len(complete)
        while len(state.chunks) > 1 and state.kept > self.cap:
            state.unread += state.chunks.popleft()[0]
        state.size, state.mtime_ns = info.st_size, info.st_mtime_ns
        return state
