"""A run's three costs (wall seconds, CPU seconds, agent steps) in the store, and `cost`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from puffer.sweep import (
    Random,
    RunResult,
    SweepConfigError,
    SweepStore,
    SweepStoreError,
    parse_sweep_config,
    run_sweep,
)

SECTION = {"method": "random", "max_runs": 3, "x": {"distribution": "linear", "min": 1, "max": 9}}
# A child that burns CPU and prints its own CPU seconds, as a vectorizer worker would.
_CHILD = "import time\nx = 0\nfor i in range(3_000_000):\n    x += i\nprint(time.process_time())"


def _steps_objective(params: dict) -> RunResult:
    """Reports 1000 * x agent steps, a wall cost of 1 and a curve of two points."""
    steps = 1000.0 * params["x"]
    return RunResult(
        score=params["x"], cost=1.0, steps=steps, curve=[(steps / 2, 0.0, 0.5), (steps, 1.0, 1.0)]
    )


def _child_objective(params: dict) -> RunResult:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, check=True)
    return RunResult(score=1.0, info={"child_cpu": float(done.stdout)})


def test_sweep_store_records_cpu_seconds_of_the_run_and_its_children(tmp_path: Path) -> None:
    config = parse_sweep_config({**SECTION, "max_runs": 1})
    (record,) = run_sweep(_child_objective, config, store=tmp_path / "s.jsonl").runs
    # The child was waited for inside the run: its CPU time is the run's too.
    assert record.cpu_seconds is not None
    assert record.cpu_seconds >= record.info["child_cpu"] > 0  # type: ignore[operator]
    (stored,) = SweepStore(tmp_path / "s.jsonl").open(["x"])
    assert stored.cpu_seconds == record.cpu_seconds and stored.agent_steps is None


def test_sweep_cost_is_what_the_method_observes(tmp_path: Path) -> None:
    for kind in ("wall", "cpu", "steps"):
        config = parse_sweep_config(SECTION, cost=kind)
        method = Random(config.space, seed=0)
        runs = run_sweep(_steps_objective, config, method=method, store=tmp_path / kind).runs
        assert [r.agent_steps for r in runs] == [1000.0 * r.params["x"] for r in runs]
        _, _, cost, _ = method.observations()
        assert cost.tolist() == [r.cost_as(kind) for r in runs]
        assert (
            cost.tolist()
            == {
                "wall": [1.0] * 3,
                "cpu": [r.cpu_seconds for r in runs],
                "steps": [r.agent_steps for r in runs],
            }[kind]
        )


def test_sweep_store_without_cpu_and_steps_reads_and_resumes_by_wall_only(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    old = {"run_id": 0, "params": {"x": 2.0}, "score": 2.0, "cost": 3.0, "status": "ok"}
    path.write_text(
        json.dumps({"format": "puffer-sweep/1", "params": ["x"]}) + "\n" + json.dumps(old) + "\n"
    )
    (record,) = SweepStore(path).open(["x"])
    assert (record.cost_as("wall"), record.cost_as("cpu"), record.cost_as("steps")) == (
        3.0,
        None,
        None,
    )
    with pytest.raises(SweepStoreError, match=r"run 0 .* no cpu cost .*--sweep.cost wall"):
        run_sweep(_steps_objective, parse_sweep_config(SECTION, cost="cpu"), store=path)
    summary = run_sweep(_steps_objective, parse_sweep_config(SECTION), store=path)
    assert len(summary.runs) == 3 and summary.runs[0] == record


def test_sweep_cost_refuses_an_unknown_kind() -> None:
    with pytest.raises(
        SweepConfigError,
        match=r"expected one of \['wall', 'cpu', 'steps'\], got 'cpus'; did you mean 'cpu'",
    ):
        parse_sweep_config(SECTION, cost="cpus")
