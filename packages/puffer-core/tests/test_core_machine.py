"""puffer.core.machine: usable_cores (affinity and cgroup CPU quotas, on faked cgroup trees) and
slot_env (the cores runs side by side share)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from puffer.core import slot_env, usable_cores
from puffer.core.machine import CGROUP_ROOT_ENV

AFFINITY = len(os.sched_getaffinity(0))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def test_no_cgroup_files_leave_the_affinity_count(tmp_path: Path) -> None:
    assert usable_cores(tmp_path) == AFFINITY


def test_a_v2_quota_of_one_cpu_gives_one_core(tmp_path: Path) -> None:
    # What Docker's --cpus=1 writes at the container's cgroup root.
    _write(tmp_path / "cpu.max", "100000 100000")
    assert usable_cores(tmp_path) == 1


def test_a_v2_max_is_no_limit(tmp_path: Path) -> None:
    _write(tmp_path / "cpu.max", "max 100000")
    assert usable_cores(tmp_path) == AFFINITY


def test_a_v1_quota_binds_and_minus_one_does_not(tmp_path: Path) -> None:
    _write(tmp_path / "cpu" / "cpu.cfs_period_us", "100000")
    _write(tmp_path / "cpu" / "cpu.cfs_quota_us", "-1")
    assert usable_cores(tmp_path) == AFFINITY
    _write(tmp_path / "cpu" / "cpu.cfs_quota_us", "50000")
    assert usable_cores(tmp_path) == 1  # half a CPU still gets one worker


def test_a_quota_above_the_affinity_mask_leaves_the_mask(tmp_path: Path) -> None:
    _write(tmp_path / "cpu.max", f"{(AFFINITY + 8) * 100000} 100000")
    assert usable_cores(tmp_path) == AFFINITY


def test_a_fractional_quota_rounds_down(tmp_path: Path) -> None:
    _write(tmp_path / "cpu.max", "150000 100000")
    assert usable_cores(tmp_path) == 1


def test_the_cgroup_root_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "cpu.max", "100000 100000")
    monkeypatch.setenv(CGROUP_ROOT_ENV, str(tmp_path))
    assert usable_cores() == 1


def test_runs_side_by_side_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    # The trainer's automatic thread count reads OMP_NUM_THREADS; a value the caller set stays.
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert slot_env(1) == {"OMP_NUM_THREADS": str(usable_cores())}
    assert slot_env(10 * usable_cores()) == {"OMP_NUM_THREADS": "1"}
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert slot_env(2) == {}
