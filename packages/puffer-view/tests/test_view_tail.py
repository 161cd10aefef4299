"""Metrics read incrementally (`puffer.view.tail`): a reload reads only what was appended, a
replaced file is read again, and a file past the cap is read from its newest rows."""

from __future__ import annotations

import json
import os
from pathlib import Path

from puffer.train.paths import RunPaths
from puffer.view import DashboardServer, collect
from puffer.view.tail import MetricsTail


def _rows(start: int, count: int) -> bytes:
    return b"".join(
        json.dumps({"step": 100 * i, "performance/sps": 50.0}).encode() + b"\n"
        for i in range(start, start + count)
    )


def _metrics(root: Path) -> Path:
    path = root / "squared" / "r1" / RunPaths.METRICS
    path.parent.mkdir(parents=True)
    path.write_bytes(_rows(1, 50))
    return path


def test_a_reload_reads_only_the_bytes_appended(tmp_path: Path) -> None:
    path = _metrics(tmp_path)
    tail = MetricsTail()
    (run,) = collect(tmp_path, tail)["runs"]
    assert run["steps"] == 5000.0 and tail.bytes_read == path.stat().st_size
    collect(tmp_path, tail)
    assert tail.bytes_read == path.stat().st_size  # unchanged: nothing read
    size = path.stat().st_size
    with path.open("ab") as file:
        file.write(_rows(51, 2) + b'{"step": 5300')  # the last row is still being written
    (run,) = collect(tmp_path, tail)["runs"]
    assert run["steps"] == 5200.0 and tail.bytes_read == path.stat().st_size
    with path.open("ab") as file:
        file.write(b"}\n")
    (run,) = collect(tmp_path, tail)["runs"]
    assert run["steps"] == 5300.0 and run["unread"] == 0
    # Only the half row was read again, never the 50 rows before it.
    assert tail.bytes_read < path.stat().st_size + 20 and tail.bytes_read > size


def test_a_replaced_file_is_read_again(tmp_path: Path) -> None:
    path = _metrics(tmp_path)
    tail = MetricsTail()
    collect(tmp_path, tail)
    # A resume truncates the file by replacing it (a new inode), possibly to the same size.
    fresh = path.with_name("fresh")
    fresh.write_bytes(_rows(1, 10))
    os.replace(fresh, path)
    (run,) = collect(tmp_path, tail)["runs"]
    assert run["steps"] == 1000.0 and len(run["step"]) == 10


def test_a_file_past_the_cap_is_read_from_its_newest_rows(tmp_path: Path) -> None:
    path = _metrics(tmp_path)
    cap = 1000  # bytes: about 20 rows of the 50
    tail = MetricsTail(cap=cap)
    (run,) = collect(tmp_path, tail)["runs"]
    assert tail.bytes_read == cap
    assert run["steps"] == 5000.0 and run["skipped"] == 0  # the cut row is not counted
    assert 10 < len(run["step"]) < 30 and run["unread"] == path.stat().st_size - sum(
        len(json.dumps({"step": int(s), "performance/sps": 50.0})) + 1 for s in run["step"]
    )
    # Appending pushes the oldest rows out; the kept bytes stay near the cap.
    for start in range(51, 111, 10):
        with path.open("ab") as file:
            file.write(_rows(start, 10))
        (run,) = collect(tmp_path, tail)["runs"]
    assert run["steps"] == 11000.0 and len(run["step"]) < 50
    assert run["unread"] > 0 and run["step"] == sorted(run["step"])


def test_the_server_keeps_what_it_read_between_loads(tmp_path: Path) -> None:
    path = _metrics(tmp_path)
    server = DashboardServer(tmp_path, port=0)
    try:
        server.content("/data.js")
        read = server.tail.bytes_read
        assert read == path.stat().st_size
        server.content("/data.js")
        assert server.tail.bytes_read == read
    finally:
        server.close()
