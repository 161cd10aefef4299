"""puffer.cli.bench: the benchmark harness of `puffer bench` and the scripts in benchmarks/."""

from __future__ import annotations

import doctest
import json
import os

import pytest

import puffer.cli.bench
from puffer.cli.bench import header, machine, record, timed
from puffer.core import APIUsageError


def test_doctests_run() -> None:
    result = doctest.testmod(puffer.cli.bench)
    assert result.failed == 0 and result.attempted > 0


def test_timed_counts_units_and_keeps_calling_until_the_seconds_have_passed() -> None:
    calls = []

    def step() -> int:
        calls.append(1)
        return 4

    rate = timed(step, warmup=2, calls=5)
    assert len(calls) == 7 and rate.units == 20
    calls.clear()
    rate = timed(step, seconds=0.05)
    assert rate.wall >= 0.05 and rate.units == 4 * len(calls)
    assert rate.per_wall == pytest.approx(rate.units / rate.wall)


def test_timed_reads_the_cpu_clock_it_is_given() -> None:
    ticks = iter([10.0, 13.0])
    rate = timed(lambda: 6, cpu_clock=lambda: next(ticks))
    assert rate.cpu == 3.0 and rate.per_cpu == 2.0


@pytest.mark.parametrize("kwargs", [{"calls": 0}, {"seconds": -1.0}])
def test_timed_refuses_a_loop_that_would_time_nothing(kwargs: dict) -> None:
    with pytest.raises(APIUsageError, match="calls >= 1 and seconds >= 0"):
        timed(lambda: 1, **kwargs)


def test_header_names_the_machine_python_and_each_package() -> None:
    line = header("numpy", "no-such-distribution")
    assert line.startswith(machine()) and f"{os.cpu_count()}-core " in line
    assert "numpy " in line and "no-such-distribution absent" in line


def test_a_record_is_json_with_its_benchmark_machine_and_date_first() -> None:
    row = json.loads(json.dumps(record("ocean_learn", score=1.5)))
    assert list(row) == ["benchmark", "machine", "date", "score"]
    assert row["benchmark"] == "ocean_learn" and row["machine"] == machine()
