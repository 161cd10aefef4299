"""Runners: where the runs of a sweep execute, several at once.

    run_sweep --submit(objective, params)--> runner slot --_execute--> objective(params)
              <-------------wait() -> [(ticket, Outcome)]------------------

`_execute` runs on the worker side and turns everything (a result, an exception, a NaN) into an
`Outcome`, so a crashing run comes back as data, never as an exception in the sweep. A worker
that dies outright (segfault, OOM kill) is reported by the runner as a failed outcome too.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import multiprocessing
import os
import resource
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from puffer.sweep.errors import SweepConfigError, SweepHalted
from puffer.sweep.space import Params

__all__ = [
    "LocalRunner",
    "Objective",
    "Outcome",
    "RayRunner",
    "RunResult",
    "Runner",
    "SerialRunner",
]


@dataclass
class RunResult:
    """What an objective returns for one run (it may also return a bare float score).

    Attributes:
        score: The metric reached; NaN marks the run failed.
        cost: What the run cost; None means its wall-clock seconds, measured by the runner.
        curve: Learning-curve points (steps so far, score, cost so far), oldest first.
        info: Anything else worth logging; JSON-serializable.
        steps: Agent steps the run trained (the sweep's cost "steps"); None takes the last
            curve point's steps, or records none.
    """

    score: float
    cost: float | None = None
    curve: Sequence[tuple[float, float, float]] = ()
    info: dict[str, Any] = field(default_factory=dict)
    steps: float | None = None


Objective = Callable[[Params], "RunResult | float"]
"""Trains with the given parameters and returns its score. Must be picklable (a module-level
function) for `LocalRunner` and `RayRunner`."""


@dataclass
class Outcome:
    """A finished run as the runner reports it: a score, or a failure with its reason; its
    CPU seconds (None when the worker died) and agent steps (None when none were reported)."""

    score: float | None
    cost: float
    curve: list[tuple[float, float, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    cpu_seconds: float | None = None
    agent_steps: float | None = None
    # The objective raised `SweepHalted`: `error` is its message, and the run is not recorded.
    halted: bool = False

    @property
    def failed(self) -> bool:
        """True when the run raised, died or reported a non-finite score."""
        return bool(self.error)


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (every thread) and of the children it has
    waited for: a run's vectorizer workers count once the run has joined them."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _execute(objective: Objective, params: Params) -> Outcome:
    """Runs one objective call, catching everything it raises (worker side)."""
    start, cpu_start = time.perf_counter(), _cpu_seconds()
    try:
        result = objective(dict(params))
    except SweepHalted as halted:
        return Outcome(None, time.perf_counter() - start, error=str(halted), halted=True)
    except Exception:
        return Outcome(
            None,
            time.perf_counter() - start,
            error=traceback.format_exc(),
            cpu_seconds=_cpu_seconds() - cpu_start,
        )
    elapsed, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    if not isinstance(result, RunResult):
        result = RunResult(score=float(result))  # type: ignore[arg-type]
    cost = elapsed if result.cost is None else float(result.cost)
    curve = [(float(s), float(v), float(c)) for s, v, c in result.curve]
    steps = result.steps if result.steps is not None else (curve[-1][0] if curve else None)
    outcome = Outcome(
        float(result.score),
        cost,
        curve,
        result.info,
        cpu_seconds=cpu,
        agent_steps=None if steps is None else float(steps),
    )
    if not math.isfinite(outcome.score):  # type: ignore[arg-type]
        outcome.error = f"objective returned score {outcome.score}"
        outcome.score = None
    return outcome


class Runner(ABC):
    """Executes objective calls on up to `slots` runs at once."""

    slots: int

    @abstractmethod
    def submit(self, objective: Objective, params: Params) -> int:
        """Starts one run on a free slot and returns its ticket; does not block."""

    @abstractmethod
    def wait(self) -> list[tuple[int, Outcome]]:
        """Blocks until at least one submitted run finishes; returns (ticket, outcome) pairs."""

    def close(self) -> None:  # noqa: B027 - runners without resources need no cleanup
        """Releases the runner's workers; idempotent."""

    def __enter__(self) -> Runner:
        return self

    def __exit__(
        self, exc: type[BaseException] | None, val: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class SerialRunner(Runner):
    """Runs each call in this process, one at a time, when `wait` is called."""

    slots = 1

    def __init__(self) -> None:
        self._pending: list[tuple[int, Objective, Params]] = []
        self._next = 0

    def submit(self, objective: Objective, params: Params) -> int:
        self._next += 1
        self._pending.append((self._next, objective, params))
        return self._next

    def wait(self) -> list[tuple[int, Outcome]]:
        ticket, objective, params = self._pending.pop(0)
        return [(ticket, _execute(objective, params))]


def _set_env(env: Mapping[str, str]) -> None:
    os.environ.update(env)


class LocalRunner(Runner):
    """Parallel slots on this machine: one worker process per slot, each with its own env vars.

    Each slot is a single-process pool started with ``spawn`` (so no parent CUDA or thread state
    leaks in), and its environment variables are set before the objective is first imported,
    e.g. ``CUDA_VISIBLE_DEVICES`` to pin a slot to one GPU. A worker that dies fails its run and
    the slot is restarted.

    Args:
        slots: Runs at once.
        slot_env: Environment variables per slot (length ``slots``); None for none.

    Example:
        >>> runner = LocalRunner.for_gpus(2)  # doctest: +SKIP
        >>> runner = LocalRunner(slots=2, slot_env=[{"OMP_NUM_THREADS": "1"}] * 2)
        >>> runner.close()
    """

    def __init__(self, slots: int, slot_env: Sequence[Mapping[str, str]] | None = None) -> None:
        if slots < 1:
            raise SweepConfigError(f"LocalRunner: slots must be >= 1, got {slots}")
        if slot_env is not None and len(slot_env) != slots:
            raise SweepConfigError(
                f"LocalRunner: slot_env has {len(slot_env)} entries for {slots} slots; give one "
                "mapping per slot"
            )
        self.slots = slots
        self._env = [dict(e) for e in slot_env] if slot_env else [{} for _ in range(slots)]
        self._pools: list[cf.ProcessPoolExecutor | None] = [None] * slots
        self._running: dict[cf.Future[Outcome], tuple[int, int]] = {}
        self._next = 0
        self._closed = False

    @classmethod
    def for_gpus(cls, num_gpus: int) -> LocalRunner:
        """One slot per GPU, slot i seeing only GPU i through ``CUDA_VISIBLE_DEVICES``."""
        return cls(num_gpus, [{"CUDA_VISIBLE_DEVICES": str(i)} for i in range(num_gpus)])

    def __repr__(self) -> str:
        return f"LocalRunner(slots={self.slots}, running={len(self._running)})"

    def _pool(self, slot: int) -> cf.ProcessPoolExecutor:
        pool = self._pools[slot]
        if pool is None:
            pool = cf.ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_set_env,
                initargs=(self._env[slot],),
            )
            self._pools[slot] = pool
        return pool

    def submit(self, objective: Objective, params: Params) -> int:
        if self._closed:
            raise SweepConfigError(f"{self!r}: submit() after close(); make a new runner")
        busy = {slot for slot, _ in self._running.values()}
        free = [s for s in range(self.slots) if s not in busy]
        if not free:
            raise SweepConfigError(
                f"{self!r}: submit() with all {self.slots} slots busy; call wait() first"
            )
        self._next += 1
        future = self._pool(free[0]).submit(_execute, objective, params)
        self._running[future] = (free[0], self._next)
        return self._next

    def wait(self) -> list[tuple[int, Outcome]]:
        done, _ = cf.wait(list(self._running), return_when=cf.FIRST_COMPLETED)
        finished = []
        for future in done:
            slot, ticket = self._running.pop(future)
            try:
                outcome = future.result()
            except cf.process.BrokenProcessPool as e:
                # The worker died mid-run; its pool is unusable, so the slot starts a fresh one.
                self._pools[slot].shutdown(wait=False)  # type: ignore[union-attr]
                self._pools[slot] = None
                outcome = Outcome(None, 0.0, error=f"worker process of slot {slot} died: {e}")
            except Exception:
                # Pickling the objective or its result failed; the run never reported.
                outcome = Outcome(None, 0.0, error=traceback.format_exc())
            finished.append((ticket, outcome))
        return finished

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for pool in self._pools:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)


def _execute_on_ray_node(objective: Objective, params: Params) -> Outcome:
    """`_execute` in a Ray task, noting the node it ran on in ``info["ray_node_id"]``."""
    import ray

    outcome = _execute(objective, params)
    outcome.info.setdefault("ray_node_id", ray.get_runtime_context().get_node_id())
    return outcome


class RayRunner(Runner):
    """Runs each call as a Ray task, so a sweep spreads over every machine of a Ray cluster.

    With ``address`` None, Ray must be initialized by the caller (``ray.init()``) and the
    runner neither starts nor stops it. With an ``address`` (an existing cluster's
    ``"host:port"``, or ``"auto"``) and Ray not yet initialized, the runner connects to that
    cluster and disconnects on `close`. Each outcome's ``info["ray_node_id"]`` says on which
    node the run went.

    Args:
        slots: Runs at once.
        num_cpus: CPUs Ray reserves per run.
        num_gpus: GPUs Ray reserves per run (Ray sets ``CUDA_VISIBLE_DEVICES`` for the task).
        resources: Custom Ray resources per run, e.g. ``{"trainer": 1}`` for nodes started
            with ``ray start --resources '{"trainer": 2}'``.
        spread: Place runs with Ray's SPREAD strategy, over as many nodes as fit.
        address: The cluster to connect to when Ray is not initialized.
    """

    def __init__(
        self,
        slots: int,
        num_cpus: float = 1,
        num_gpus: float = 0,
        resources: Mapping[str, float] | None = None,
        spread: bool = False,
        address: str | None = None,
    ) -> None:
        import ray  # the [ray] extra; imported here so the package works without it

        if slots < 1:
            raise SweepConfigError(f"RayRunner: slots must be >= 1, got {slots}")
        self._connected = False
        if not ray.is_initialized():
            if address is None:
                raise SweepConfigError(
                    "RayRunner: Ray is not initialized; call ray.init() first, or pass "
                    "address='host:port' (or 'auto') of a running cluster"
                )
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
            self._connected = True
        self.slots = slots
        self._ray = ray
        self._remote = ray.remote(
            num_cpus=num_cpus,
            num_gpus=num_gpus,
            resources=dict(resources or {}),
            scheduling_strategy="SPREAD" if spread else "DEFAULT",
            max_retries=0,
        )(_execute_on_ray_node)
        self._running: dict[Any, int] = {}
        self._next = 0

    def __repr__(self) -> str:
        return f"RayRunner(slots={self.slots}, running={len(self._running)})"

    def submit(self, objective: Objective, params: Params) -> int:
        self._next += 1
        self._running[self._remote.remote(objective, params)] = self._next
        return self._next

    def wait(self) -> list[tuple[int, Outcome]]:
        done, _ = self._ray.wait(list(self._running), num_returns=1)
        finished = []
        for ref in done:
            ticket = self._running.pop(ref)
            try:
                outcome = self._ray.get(ref)
            except self._ray.exceptions.RayError as e:
                # The task's worker died (or Ray lost it): fail the run, keep the sweep going.
                outcome = Outcome(None, 0.0, error=f"Ray task failed: {e}")
            finished.append((ticket, outcome))
        return finished

    def close(self) -> None:
        for ref in self._running:
            self._ray.cancel(ref, force=True)
        self._running.clear()
        if self._connected:
            self._connected = False
            self._ray.shutdown()
