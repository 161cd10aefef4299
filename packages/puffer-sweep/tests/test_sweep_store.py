"""The JSONL store and run_sweep: failures, progress events, resume (also after a real kill)."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from puffer.sweep import (
    Random,
    RunRecord,
    RunResult,
    SweepEvent,
    SweepHalted,
    SweepStore,
    SweepStoreError,
    parse_sweep_config,
    run_sweep,
)

SECTION = {
    "method": "random",
    "max_runs": 8,
    "x": {"distribution": "linear", "min": -1.0, "max": 1.0},
    "lr": {"distribution": "log", "min": 1e-4, "max": 1e-1},
}


def _objective(params: dict) -> RunResult | float:
    if params["x"] < -0.6:
        raise RuntimeError("diverged")
    if params["x"] > 0.6:
        return math.nan
    return RunResult(score=-((params["x"] - 0.2) ** 2), cost=1.0 + params["x"], info={"tag": "a"})


def test_sweep_store_round_trips_records(tmp_path: Path) -> None:
    store = SweepStore(tmp_path / "sub" / "sweep.jsonl")
    assert store.open(["x"]) == []
    records = [
        RunRecord(0, {"x": 0.5}, 1.0, 2.0, curve=[(1.0, 0.5, 1.0), (2.0, 1.0, 2.0)]),
        RunRecord(1, {"x": 0.1}, None, 0.5, status="failed", error="Traceback ..."),
    ]
    for record in records:
        store.append(record)
    assert store.open(["x"]) == records


def test_sweep_store_refuses_another_sweeps_file(tmp_path: Path) -> None:
    store = SweepStore(tmp_path / "sweep.jsonl")
    store.open(["x", "lr"])
    with pytest.raises(SweepStoreError, match=r"holds a sweep over \['x', 'lr'\], not \['x'\]"):
        store.open(["x"])
    (tmp_path / "other.jsonl").write_text('{"a": 1}\n')
    with pytest.raises(SweepStoreError, match="line 1 is not a puffer-sweep/1 header"):
        SweepStore(tmp_path / "other.jsonl").open(["x"])


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"\xff\xfe", "line 2 is not UTF-8"),
        (b"[1, 2]", r"line 2 is no run record \(a list, not an object\)"),
        (b'{"run_id": 0, "params": {}, "score": 1, "cost": 1, "evil": 1}', r"lacks: \['evil'\]"),
        (b'{"run_id": 0}', "line 2 is no run record"),
        (b"[" * 200_000 + b"]" * 200_000, "line 2 nests too deep"),
    ],
)
def test_sweep_store_lines_no_sweep_wrote_are_one_error(
    tmp_path: Path, line: bytes, message: str
) -> None:
    path = tmp_path / "sweep.jsonl"
    SweepStore(path).open(["x"])
    with path.open("ab") as f:
        f.write(
            line
            + b"\n"
            + json.dumps({"run_id": 1, "params": {}, "score": 1, "cost": 1}).encode()
            + b"\n"
        )
    with pytest.raises(SweepStoreError, match=message):
        SweepStore(path).open(["x"])


def test_sweep_store_is_never_opened_through_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    (tmp_path / "sweep.jsonl").symlink_to(target)
    with pytest.raises(SweepStoreError, match="is a symlink"):
        SweepStore(tmp_path / "sweep.jsonl").open(["x"])
    assert not target.exists()


def test_sweep_store_drops_a_line_cut_short_and_refuses_a_broken_middle(tmp_path: Path) -> None:
    path = tmp_path / "sweep.jsonl"
    store = SweepStore(path)
    store.open(["x"])
    store.append(RunRecord(0, {"x": 0.5}, 1.0, 2.0))
    with path.open("a") as f:
        f.write('{"run_id": 1, "params": {"x"')  # what a kill mid-write leaves
    assert [r.run_id for r in store.open(["x"])] == [0]
    store.append(RunRecord(1, {"x": 0.2}, 3.0, 1.0))
    assert [r.run_id for r in store.open(["x"])] == [0, 1]
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "{oops", *lines[1:]]) + "\n")
    with pytest.raises(SweepStoreError, match="line 2 is not valid JSON"):
        store.open(["x"])


def test_sweep_failures_are_recorded_and_the_sweep_goes_on(tmp_path: Path) -> None:
    config = parse_sweep_config({**SECTION, "max_runs": 30})
    events: list[SweepEvent] = []
    summary = run_sweep(_objective, config, store=tmp_path / "s.jsonl", on_event=events.append)
    assert len(summary.runs) == 30
    raised = [r for r in summary.runs if r.params["x"] < -0.6]
    nans = [r for r in summary.runs if r.params["x"] > 0.6]
    assert raised and nans
    assert all(r.failed and "RuntimeError: diverged" in r.error for r in raised)
    assert all(r.failed and "score nan" in r.error for r in nans)
    assert summary.num_failed == len(raised) + len(nans)
    ok = [r for r in summary.runs if not r.failed]
    assert summary.best[0].score == max(r.score for r in ok)  # type: ignore[type-var]
    assert summary.best_params == summary.best[0].params
    assert [e.kind for e in events].count("finished") == 30
    assert events[-1].num_finished == 30 and events[-1].best == summary.best[0]
    stored = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()[1:]]
    assert [d["run_id"] for d in stored] == list(range(30))
    assert all(d["score"] is None for d in stored if d["status"] == "failed")


def test_sweep_halted_by_its_objective_stops_with_that_run_unrecorded(tmp_path: Path) -> None:
    calls = []

    def objective(params: dict) -> RunResult:
        calls.append(params)
        if len(calls) == 3:
            raise SweepHalted("cannot write run-3/checkpoint.pt: No space left on device")
        return RunResult(score=params["x"], cost=1.0)

    config = parse_sweep_config(SECTION)
    path = tmp_path / "s.jsonl"
    with pytest.raises(SweepHalted, match="No space left on device"):
        run_sweep(objective, config, store=path)
    # The two runs before it are stored; the halted one is not (a resume runs a new one).
    assert [r.run_id for r in SweepStore(path).open(["x", "lr"])] == [0, 1]
    assert len(run_sweep(lambda p: 1.0, config, store=path).runs) == 8


# Appends a record under a file size limit (RLIMIT_FSIZE: writes past it fail with EFBIG, as a
# full disk fails with ENOSPC) that leaves room for part of the line only.
_FULL = """
import resource, signal, sys
from puffer.sweep import RunRecord, SweepStore, SweepStoreError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
store = SweepStore(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
try:
    store.append(RunRecord(1, {"x": 0.25}, 1.0, 2.0, error="e" * 4096))
except SweepStoreError as error:
    print(error)
"""


def test_sweep_store_append_on_a_full_disk_is_one_error_and_keeps_the_store_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    store = SweepStore(path)
    store.open(["x"])
    store.append(RunRecord(0, {"x": 0.5}, 1.0, 2.0))
    before = path.read_bytes()
    limit = str(len(before) + 100)
    done = subprocess.run(
        [sys.executable, "-c", _FULL, str(path), limit], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"cannot append to {store!r}: File too large; it holds the ")
    assert done.stdout.count("\n") == 1
    assert path.read_bytes() == before
    assert [r.run_id for r in store.open(["x"])] == [0]


def test_sweep_minimize_ranks_low_scores_first() -> None:
    config = parse_sweep_config({**SECTION, "goal": "minimize", "max_runs": 10})
    summary = run_sweep(lambda p: abs(p["x"]), config, top_k=3)
    scores = [r.score for r in summary.best]
    assert len(scores) == 3 and scores == sorted(scores)  # type: ignore[type-var]
    assert scores[0] == min(r.score for r in summary.runs)  # type: ignore[type-var]


def test_sweep_resumes_from_its_store_in_process(tmp_path: Path) -> None:
    config = parse_sweep_config(SECTION)
    path = tmp_path / "s.jsonl"
    first = run_sweep(_objective, config, store=path, max_runs=3)
    method = Random(config.space, seed=0)
    events: list[SweepEvent] = []
    second = run_sweep(_objective, config, method=method, store=path, on_event=events.append)
    assert events[0].kind == "resumed" and events[0].num_finished == 3
    assert second.runs[:3] == first.runs
    assert [r.run_id for r in second.runs] == list(range(8))
    assert method.num_runs == 8
    # Suggestions after the resume are new points, not a replay of the seed's first draws.
    assert {r.params["x"] for r in second.runs[3:]}.isdisjoint(r.params["x"] for r in first.runs)


_SCRIPT = """
import sys, time
from puffer.sweep import RunResult, parse_sweep_config, run_sweep

def objective(params):
    time.sleep(0.15)
    return RunResult(score=-(params["x"] - 0.2) ** 2, cost=1.0)

config = parse_sweep_config({
    "method": "genetic", "max_runs": 12,
    "x": {"distribution": "linear", "min": -1.0, "max": 1.0},
})
run_sweep(objective, config, store=sys.argv[1])
"""


def _records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    # Complete lines only: the sweep may be part-way through appending the last one.
    return [json.loads(line) for line in path.read_text().split("\n")[1:-1]]


def test_sweep_killed_process_resumes_from_the_store(tmp_path: Path) -> None:
    script = tmp_path / "sweep_script.py"
    script.write_text(textwrap.dedent(_SCRIPT))
    store = tmp_path / "sweep.jsonl"
    cmd = [sys.executable, str(script), str(store)]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + 120
    while len(_records(store)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    before = _records(store)
    assert 3 <= len(before) < 12

    subprocess.run(cmd, env=env, check=True, timeout=120)
    after = _records(store)
    assert len(after) == 12
    assert after[: len(before)] == before
    assert sorted(r["run_id"] for r in after) == list(range(12))


def test_sweep_categorical_params_resume_from_the_store(tmp_path: Path) -> None:
    section = {
        "method": "random",
        "max_runs": 6,
        "x": {"distribution": "linear", "min": 0.0, "max": 1.0},
        "act": {"distribution": "categorical", "values": ["relu", 2, 0.5, True]},
    }
    config = parse_sweep_config(section)

    def objective(params: dict) -> RunResult:
        return RunResult(score=params["x"], cost=1.0)

    first = run_sweep(objective, config, max_runs=4, store=tmp_path / "sweep.jsonl")
    resumed = run_sweep(objective, config, store=tmp_path / "sweep.jsonl")
    assert [r.params for r in resumed.runs[:4]] == [r.params for r in first.runs]
    assert len(resumed.runs) == 6
    for record in resumed.runs:  # JSON keeps each value's type: True stays apart from 2 and 1
        value = record.params["act"]
        assert any(value == v and type(value) is type(v) for v in ("relu", 2, 0.5, True))
