"""What this process may use of the machine: its cores.

The vectorizer sizes its worker pool with `usable_cores`, the trainer its torch threads and the
config its derived worker counts, so all three agree on one number; runs started side by side
(a sweep's slots, a benchmark's seeds) split it with `slot_env`.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CGROUP_ROOT_ENV", "slot_env", "usable_cores"]

#: Environment variable naming where the cgroup filesystem is mounted (default /sys/fs/cgroup);
#: a test or an unusual mount points it elsewhere.
CGROUP_ROOT_ENV = "PUFFER_CGROUP_ROOT"


def usable_cores(cgroup_root: str | os.PathLike[str] | None = None) -> int:
    """CPUs this process may keep busy: the fewest of its affinity mask (`taskset`, a cpuset)
    and its cgroup CPU quota (Docker's `--cpus`, Kubernetes' CPU limit), else the machine's count.

    Args:
        cgroup_root: where the cgroup filesystem is mounted; default `$PUFFER_CGROUP_ROOT`,
            else /sys/fs/cgroup.

    Returns:
        At least 1. A fractional quota rounds down (1.5 CPUs count as 1): a thread beyond the
        quota is throttled each period, and a synchronous vectorizer waits for its slowest worker.

    Example:
        >>> usable_cores() >= 1
        True
    """
    if hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0))
    else:
        cores = os.cpu_count() or 1
    root = Path(cgroup_root or os.environ.get(CGROUP_ROOT_ENV) or "/sys/fs/cgroup")
    quota = _cgroup_quota(root)
    if quota is not None:
        cores = min(cores, int(quota))
    return max(1, cores)


def _cgroup_quota(root: Path) -> float | None:
    """The tightest CPU quota (in CPUs) on this process's cgroup or any cgroup above it, under
    cgroup v2 (`cpu.max`) or v1 (`cpu.cfs_quota_us` / `cpu.cfs_period_us`); None without one.
    Ancestors count because a parent's limit binds its children, and inside a container the
    cgroup namespace makes the container's own group the root."""
    quotas = []
    for group in _own_cgroup_dirs(root):
        quotas.append(_read_v2(group / "cpu.max"))
        quotas.append(_read_v1(group / "cpu.cfs_quota_us", group / "cpu.cfs_period_us"))
    found = [q for q in quotas if q is not None]
    return min(found) if found else None


def _own_cgroup_dirs(root: Path) -> list[Path]:
    """Directories whose CPU limits apply to this process: its own group and each ancestor up
    to the root, under the v2 tree and under v1's cpu controller mount."""
    v2_path, v1_controllers, v1_path = "/", "cpu", "/"
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            v2_path = path
        elif "cpu" in controllers.split(","):
            v1_controllers, v1_path = controllers, path
    tops = [root]
    tops += [root / name for name in dict.fromkeys([v1_controllers, "cpu"])]
    dirs = []
    for top, path in zip(tops, [v2_path] + [v1_path] * (len(tops) - 1), strict=True):
        group = top / path.lstrip("/")
        while True:
            dirs.append(group)
            if group == top or top not in group.parents:
                break
            group = group.parent
    return dirs


def _read_v2(path: Path) -> float | None:
    try:
        quota, period = path.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return _ratio(quota, period)


def _read_v1(quota_path: Path, period_path: Path) -> float | None:
    try:
        quota, period = quota_path.read_text().strip(), period_path.read_text().strip()
    except OSError:
        return None
    if quota.startswith("-"):  # -1 means no limit
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def slot_env(slots: int) -> dict[str, str]:
    """Environment of each of `slots` runs started side by side: its share of the usable cores
    as OMP_NUM_THREADS, which the trainer's automatic thread count reads (so the runs do not
    oversubscribe the machine); nothing when the caller set OMP_NUM_THREADS."""
    if "OMP_NUM_THREADS" in os.environ:
        return {}
    return {"OMP_NUM_THREADS": str(max(1, usable_cores() // slots))}
