"""What one reload of `puffer dashboard`'s data costs when a run's metrics file is huge.

What it measures: a data dir holding one run whose `metrics.jsonl` is `--gigabytes` long
(generated in a temp dir, removed after), served by a real `DashboardServer` on 127.0.0.1; the
wall time and the growth of this process's peak resident memory (VmHWM) of the first load of
`/<token>/data.js`, of a second load with nothing appended, and of a third after one row is
appended. The peer (`--peer`, seconds and GBs of memory) is the file parsed whole, as every
load did before the incremental reader.

Acceptance (issue 62): at 1 GB the second load takes < 1 s and < 200 MB more memory.

Recommended: ``uv run python benchmarks/dashboard_reload.py`` (1 GB: about 10 s to write the
file, then seconds); ``--gigabytes 0.1 --peer`` to see the old cost on a file that fits.
"""

from __future__ import annotations

import argparse
import http.client
import json
import tempfile
import time
from pathlib import Path

from puffer.cli.bench import header
from puffer.train.metrics import parse_metrics
from puffer.train.paths import RunPaths
from puffer.view import DashboardServer


def _peak_rss() -> int:
    """This process's peak resident set so far, bytes (Linux's VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _write_metrics(path: Path, size: int) -> int:
    """Rows shaped like a trainer's (30 metrics) until `path` holds `size` bytes; the rows."""
    keys = [f"losses/metric_{i}" for i in range(28)] + ["environment/score", "performance/sps"]
    path.parent.mkdir(parents=True)
    rows = 0
    with path.open("wb") as file:
        while file.tell() < size:
            chunk = []
            for _ in range(1000):
                rows += 1
                row = {"step": rows * 2048, **{k: 0.001 * (rows % 997) for k in keys}}
                chunk.append(json.dumps(row))
            file.write(("\n".join(chunk) + "\n").encode())
    return rows


def _load(server: DashboardServer) -> tuple[float, int, int]:
    """One GET of data.js: seconds, growth of the peak RSS, bytes of the answer."""
    before = _peak_rss()
    start = time.perf_counter()
    port = server.httpd.server_address[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", f"/{server.token}/data.js", headers={"Sec-Fetch-Site": "same-origin"})
    answer = conn.getresponse()
    body = answer.read()
    conn.close()
    assert answer.status == 200, answer.status
    return time.perf_counter() - start, _peak_rss() - before, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--peer", action="store_true", help="also parse the file whole")
    args = parser.parse_args()
    print(header("numpy"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        metrics = root / "squared" / "big" / RunPaths.METRICS
        rows = _write_metrics(metrics, int(args.gigabytes * 1e9))
        print(f"metrics.jsonl: {metrics.stat().st_size / 1e9:.2f} GB, {rows:,} rows")
        server = DashboardServer(root, port=0).start()
        try:
            for label in ("first load", "second load (nothing new)"):
                seconds, grew, size = _load(server)
                print(f"{label}: {seconds:.3f} s, peak RSS +{grew / 1e6:.1f} MB, {size:,} B")
            with metrics.open("ab") as file:
                file.write(json.dumps({"step": (rows + 1) * 2048}).encode() + b"\n")
            seconds, grew, size = _load(server)
            print(f"third load (one row appended): {seconds:.3f} s, peak RSS +{grew / 1e6:.1f} MB")
            print(f"bytes read from metrics files: {server.tail.bytes_read:,}")
        finally:
            server.close()
        if args.peer:
            before, start = _peak_rss(), time.perf_counter()
            parse_metrics(metrics.read_bytes())
            seconds, grew = time.perf_counter() - start, _peak_rss() - before
            print(f"peer (the whole file parsed): {seconds:.3f} s, +{grew / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
