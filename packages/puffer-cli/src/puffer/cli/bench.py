"""What every benchmark shares: the machine it ran on, one timed loop, one result record.

`puffer bench` and the scripts under `benchmarks/` print `header()` first, time with `timed`
and write results as `record()` objects, so that figures from different scripts, machines and
days can be told apart and compared.

It lives in puffer-cli, not in puffer-core (the env contract, which no benchmark needs) nor in
`benchmarks/` (a folder of scripts, which the installed `puffer bench` cannot import): the one
installed package that `puffer bench` and every benchmark script already have.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

from puffer.core.errors import APIUsageError
from puffer.core.machine import usable_cores

__all__ = ["Rate", "header", "machine", "record", "timed"]


def machine() -> str:
    """The core count and CPU model, e.g. `2-core AMD EPYC 7B13`: what every stored result names.

    Example:
        >>> machine().split("-core ")[0].isdigit()
        True
    """
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass  # not Linux: platform's name is the best there is
    return f"{os.cpu_count()}-core {model}"


def header(*packages: str) -> str:
    """One line saying where figures were measured: `machine()`, the cores this process may use
    when fewer, the 1-minute load average (a shared machine's figures drift with it), Python's
    version and each named distribution's.

    Args:
        packages: distribution names, e.g. "numpy", "torch"; one not installed reads "absent".

    Example:
        >>> header("numpy").split("; ")[1].startswith("python ")
        True
    """
    where = machine()
    if usable_cores() < (os.cpu_count() or 1):
        where += f" ({usable_cores()} usable)"
    versions = [f"python {platform.python_version()}"]
    for name in packages:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return f"{where}, load {os.getloadavg()[0]:.2f}; {', '.join(versions)}"


@dataclass(frozen=True)
class Rate:
    """What one `timed` loop did: `units` of work (agent steps, calls) in `wall` seconds of
    wall-clock time and `cpu` seconds of the CPU clock it was given."""

    units: float
    wall: float
    cpu: float

    @property
    def per_wall(self) -> float:
        """Units per wall-clock second: what a user waits for, machine load included."""
        return self.units / self.wall

    @property
    def per_cpu(self) -> float:
        """Units per CPU second: on a loaded machine, the rate while actually running."""
        return self.units / max(self.cpu, 1e-9)


def timed(
    step: Callable[[], float],
    seconds: float = 0.0,
    *,
    warmup: int = 0,
    calls: int = 1,
    cpu_clock: Callable[[], float] = time.process_time,
) -> Rate:
    """Call `step` `warmup` times untimed, then at least `calls` times and until `seconds` of
    wall-clock time have passed, timing those calls.

    Args:
        step: does some work and returns how many units it did (agent steps, rows, 1 for one
            call). Its own time, Python's call included, is what is measured: give it enough
            work per call that this does not matter.
        seconds: least timed wall-clock seconds; 0 times exactly `calls` calls.
        warmup: untimed calls first (library loads, allocator, caches).
        calls: least timed calls.
        cpu_clock: the CPU-seconds clock; this process's by default, another process's for work
            done there.

    Returns:
        The units, wall seconds and CPU seconds of the timed calls.

    Raises:
        APIUsageError: `calls` below 1 or `seconds` negative.

    Example:
        >>> rate = timed(lambda: 10, calls=3)
        >>> rate.units
        30.0
    """
    if calls < 1 or seconds < 0:
        raise APIUsageError(
            f"timed(calls={calls}, seconds={seconds}): needs calls >= 1 and seconds >= 0"
        )
    for _ in range(warmup):
        step()
    units, done = 0.0, 0
    start, cpu = time.perf_counter(), cpu_clock()
    while True:
        units += step()
        done += 1
        wall = time.perf_counter() - start
        if done >= calls and wall >= seconds:
            return Rate(units, wall, cpu_clock() - cpu)


def record(benchmark: str, **fields: object) -> dict[str, object]:
    """A benchmark result as one JSON-ready object: `benchmark` (the script or command), the
    `machine()`, the date (UTC, YYYY-MM-DD), then `fields` (JSON-serializable values).

    Example:
        >>> sorted(record("ocean_learn", score=1.0))
        ['benchmark', 'date', 'machine', 'score']
    """
    return {
        "benchmark": benchmark,
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        **fields,
    }
