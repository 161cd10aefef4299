"""`run_sweep`: ask the method, run on the runner's slots, tell the method, store every run.

    store.open -> replay stored runs into the method
    loop: fill free slots with method.suggest()  ->  runner.wait()  ->  method.observe*,
          store.append (fsynced), on_event(...)

The method sees each run's cost as `config.cost` counts it (wall seconds, CPU seconds or agent
steps); the store keeps all three.
    until max_runs runs are stored; return a SweepSummary

Progress goes to the ``on_event`` callback, never to stdout.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from puffer.sweep.config import SweepConfig
from puffer.sweep.errors import SweepHalted, SweepStoreError
from puffer.sweep.methods import Method, ParetoGenetic, Random
from puffer.sweep.runners import Objective, Outcome, Runner, SerialRunner
from puffer.sweep.space import Params
from puffer.sweep.store import CostKind, RunRecord, SweepStore

__all__ = ["SweepEvent", "SweepSummary", "make_method", "run_sweep"]


def make_method(config: SweepConfig) -> Method:
    """Builds the method named by ``config.method`` over ``config.space``.

    Example:
        >>> from puffer.sweep.config import parse_sweep_config
        >>> cfg = parse_sweep_config({"method": "genetic", "x": {"distribution": "linear",
        ...                           "min": 0, "max": 1}})
        >>> make_method(cfg)
        ParetoGenetic(params=1, goal='maximize', observations=0)
    """
    if config.method == "protein":
        from puffer.sweep.protein import Protein  # torch + gpytorch, loaded only when needed

        return Protein(config.space, goal=config.goal, seed=config.seed, max_cost=config.max_cost)
    if config.method == "genetic":
        return ParetoGenetic(config.space, goal=config.goal, seed=config.seed)
    return Random(config.space, goal=config.goal, seed=config.seed)


@dataclass
class SweepEvent:
    """One progress report from `run_sweep`.

    Attributes:
        kind: "resumed" (runs read back from the store), "started" or "finished" (a run).
        run_id: The run concerned; -1 for "resumed".
        params: The run's parameters; {} for "resumed".
        record: The finished run, for "finished" only.
        num_finished: Runs finished so far, failures and resumed runs included.
        max_runs: Runs in the whole sweep.
        best: The best successful run so far, if any.
    """

    kind: Literal["resumed", "started", "finished"]
    run_id: int
    params: Params
    record: RunRecord | None
    num_finished: int
    max_runs: int
    best: RunRecord | None


@dataclass
class SweepSummary:
    """The result of a sweep.

    Attributes:
        runs: Every run, in the order they finished.
        best: The best successful runs, best first (at most ``top_k``).
        num_failed: Runs that crashed, died or returned NaN.
        total_cost: Sum of the (wall) cost of every run.
    """

    runs: list[RunRecord]
    best: list[RunRecord]
    num_failed: int
    total_cost: float

    @property
    def best_params(self) -> Params | None:
        """Parameters of the best run, or None when every run failed."""
        return self.best[0].params if self.best else None


def _ranked(records: list[RunRecord], goal: str) -> list[RunRecord]:
    ok = [r for r in records if not r.failed and r.score is not None]
    return sorted(ok, key=lambda r: r.score, reverse=goal == "maximize")  # type: ignore[arg-type, return-value]


def _tell(method: Method, record: RunRecord, kind: CostKind) -> None:
    """Hand `record` to `method`, its cost (and its curve's) counted as `kind`."""
    cost = record.cost_as(kind)
    if cost is None and not record.failed:
        raise SweepStoreError(
            f"run {record.run_id} of the sweep store has no {kind} cost (a store written before "
            f"puffer-sweep recorded it); resume with the cost the sweep started with "
            "(--sweep.cost wall), or start a new sweep (another --name)"
        )
    if record.curve and not record.failed:
        method.observe_curve(record.params, _curve_as(record, kind))
    else:
        # A failed run without this cost (a worker that died) counts as free, as the runner
        # reports such a run's wall cost: only successful runs fit the cost model.
        method.observe(record.params, record.score, 0.0 if cost is None else cost)


def _curve_as(record: RunRecord, kind: CostKind) -> list[tuple[float, float, float]]:
    """The curve with each point's cost counted as `kind`: "steps" is the point's steps;
    "cpu" scales the point's wall cost by the run's CPU-to-wall ratio (workers' CPU time is
    only known once the run has reaped them, so it is spread evenly over the run)."""
    if kind == "wall":
        return record.curve
    if kind == "steps":
        return [(steps, score, steps) for steps, score, _ in record.curve]
    ratio = record.cpu_seconds / record.cost if record.cost > 0 else 0.0  # type: ignore[operator]
    return [(steps, score, cost * ratio) for steps, score, cost in record.curve]


def run_sweep(
    objective: Objective,
    config: SweepConfig,
    *,
    method: Method | None = None,
    max_runs: int | None = None,
    store: SweepStore | str | os.PathLike[str] | None = None,
    runner: Runner | None = None,
    on_event: Callable[[SweepEvent], None] | None = None,
    top_k: int = 5,
) -> SweepSummary:
    """Runs a hyperparameter sweep, resuming from ``store`` if it already holds runs.

    Args:
        objective: ``objective(params) -> RunResult | float``; picklable for process or Ray
            runners. An exception or a NaN score records the run as failed and the sweep goes on;
            `SweepHalted` stops the sweep, that run unrecorded.
        config: The sweep options and space (see `parse_sweep_config`).
        method: The search method; None builds ``config.method`` with `make_method`.
        max_runs: Runs in the sweep, resumed ones included; None uses ``config.max_runs``.
        store: JSONL file (or `SweepStore`) appended after every run; None keeps nothing on disk.
        runner: Where runs execute; None runs them one at a time in this process. A runner
            passed in is left open; the caller closes it.
        on_event: Called with a `SweepEvent` as runs start and finish (e.g. to log or draw).
        top_k: How many of the best runs the summary keeps.

    Returns:
        A `SweepSummary` of every run in the store.

    Raises:
        SweepHalted: the objective raised it; the runs finished before stay in the store.
        SweepStoreError: the store belongs to another sweep, or cannot be written.

    Example:
        >>> from puffer.sweep import RunResult, parse_sweep_config
        >>> cfg = parse_sweep_config({"method": "random", "max_runs": 6,
        ...                           "x": {"distribution": "linear", "min": -1, "max": 1}})
        >>> summary = run_sweep(lambda p: RunResult(-p["x"] ** 2, cost=1.0), cfg)
        >>> len(summary.runs), summary.total_cost
        (6, 6.0)
    """
    max_runs = config.max_runs if max_runs is None else max_runs
    method = make_method(config) if method is None else method
    own_runner = runner is None
    runner = SerialRunner() if runner is None else runner
    store = SweepStore(store) if store is not None and not isinstance(store, SweepStore) else store
    emit = on_event if on_event is not None else (lambda event: None)

    records = store.open(config.space.names) if store is not None else []
    for record in records:
        _tell(method, record, config.cost)
    if records:
        ranked = _ranked(records, config.goal)
        emit(
            SweepEvent(
                "resumed", -1, {}, None, len(records), max_runs, ranked[0] if ranked else None
            )
        )

    pending: dict[int, tuple[int, Params]] = {}
    next_id = max((r.run_id for r in records), default=-1) + 1
    try:
        while len(records) < max_runs:
            while len(pending) < runner.slots and len(records) + len(pending) < max_runs:
                params = method.suggest()
                pending[runner.submit(objective, params)] = (next_id, params)
                ranked = _ranked(records, config.goal)
                emit(
                    SweepEvent(
                        "started",
                        next_id,
                        params,
                        None,
                        len(records),
                        max_runs,
                        ranked[0] if ranked else None,
                    )
                )
                next_id += 1
            for ticket, outcome in runner.wait():
                run_id, params = pending.pop(ticket)
                if outcome.halted:
                    raise SweepHalted(outcome.error)
                record = _record(run_id, params, outcome)
                _tell(method, record, config.cost)
                if store is not None:
                    store.append(record)
                records.append(record)
                ranked = _ranked(records, config.goal)
                emit(
                    SweepEvent(
                        "finished",
                        run_id,
                        params,
                        record,
                        len(records),
                        max_runs,
                        ranked[0] if ranked else None,
                    )
                )
    finally:
        if own_runner:
            runner.close()
    ranked = _ranked(records, config.goal)
    return SweepSummary(
        runs=records,
        best=ranked[:top_k],
        num_failed=sum(r.failed for r in records),
        total_cost=math.fsum(r.cost for r in records),
    )


def _record(run_id: int, params: Params, outcome: Outcome) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        params=params,
        score=outcome.score,
        cost=outcome.cost,
        status="failed" if outcome.failed else "ok",
        error=outcome.error,
        curve=outcome.curve,
        info=outcome.info,
        cpu_seconds=outcome.cpu_seconds,
        agent_steps=outcome.agent_steps,
    )
