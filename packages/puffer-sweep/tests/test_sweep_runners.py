"""Runners: local parallel slots (real spawned processes) and Ray (a real local cluster)."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from puffer.sweep import (
    LocalRunner,
    RayRunner,
    RunResult,
    SweepConfigError,
    parse_sweep_config,
    run_sweep,
)

CONFIG = parse_sweep_config(
    {"method": "random", "max_runs": 6, "x": {"distribution": "linear", "min": 0.0, "max": 1.0}}
)

# Spawned workers unpickle the objective by module name, so it must live in an importable
# module; the test writes one and puts its folder on sys.path, which spawn passes to children.
_OBJECTIVES = """
import os, time
from puffer.sweep import RunResult

def tagged(params):
    time.sleep(0.2)
    return RunResult(score=params["x"], cost=1.0,
                     info={"pid": os.getpid(), "tag": os.environ.get("SWEEP_SLOT_TAG")})

def mixed(params):
    if params["x"] < 0.25:
        os._exit(3)  # the worker process dies outright
    if params["x"] < 0.5:
        raise ValueError("bad run")
    return params["x"]
"""


@pytest.fixture
def objectives(tmp_path: Path) -> Iterator[ModuleType]:
    (tmp_path / "sweep_test_objectives.py").write_text(textwrap.dedent(_OBJECTIVES))
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module("sweep_test_objectives")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("sweep_test_objectives", None)


def test_sweep_local_runner_runs_slots_in_parallel_processes(objectives: ModuleType) -> None:
    with LocalRunner(2, slot_env=[{"SWEEP_SLOT_TAG": "a"}, {"SWEEP_SLOT_TAG": "b"}]) as runner:
        summary = run_sweep(objectives.tagged, CONFIG, runner=runner)
        with pytest.raises(SweepConfigError, match="all 2 slots busy"):
            runner.submit(objectives.tagged, {"x": 0.1})
            runner.submit(objectives.tagged, {"x": 0.2})
            runner.submit(objectives.tagged, {"x": 0.3})
    assert len(summary.runs) == 6 and summary.num_failed == 0
    assert {r.info["tag"] for r in summary.runs} == {"a", "b"}
    assert len({r.info["pid"] for r in summary.runs}) == 2
    with pytest.raises(SweepConfigError, match="submit\\(\\) after close\\(\\)"):
        runner.submit(objectives.tagged, {"x": 0.1})


def test_sweep_local_runner_survives_crashing_and_dying_runs(objectives: ModuleType) -> None:
    config = parse_sweep_config(
        {"method": "random", "max_runs": 10, "x": {"distribution": "linear", "min": 0, "max": 1}}
    )
    with LocalRunner(2) as runner:
        summary = run_sweep(objectives.mixed, config, runner=runner)
    died = [r for r in summary.runs if r.params["x"] < 0.25]
    raised = [r for r in summary.runs if 0.25 <= r.params["x"] < 0.5]
    assert died and raised and len(summary.runs) == 10
    assert all(r.failed and "died" in r.error for r in died)
    assert all(r.failed and "ValueError: bad run" in r.error for r in raised)
    assert all(not r.failed for r in summary.runs if r.params["x"] >= 0.5)


def _ray() -> ModuleType:
    # Under `uv run`, Ray would start each worker through `uv run` too (a sync per worker, tens
    # of seconds) unless this is off when ray is imported; the workspace env is already right.
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    return pytest.importorskip("ray")


def test_sweep_ray_runner_on_a_local_cluster() -> None:
    ray = _ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:

        def objective(params: dict) -> RunResult | float:
            if params["x"] < 0.3:
                raise ValueError("bad run")
            return RunResult(score=params["x"], cost=2.0)

        with RayRunner(slots=2) as runner:
            summary = run_sweep(objective, CONFIG, runner=runner)
    finally:
        ray.shutdown()
    assert len(summary.runs) == 6
    assert all(("ValueError: bad run" in r.error) == (r.params["x"] < 0.3) for r in summary.runs)
    assert all(r.cost == 2.0 for r in summary.runs if not r.failed)


def test_sweep_ray_runner_needs_ray_initialized() -> None:
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()
    with pytest.raises(SweepConfigError, match=r"Ray is not initialized; call ray\.init"):
        RayRunner(slots=1)
