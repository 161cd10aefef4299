"""What this process may use of the machine: its cores.

The vectorizer sizes its worker pool with `usable_cores`, the trainer its torch threads and the
config its derived worker counts, so all three agree on one number; runs started side by side
(a sweep's slots, a benchmark's seeds) split it with `slot_env`.
"""

from __future__ import annotations

import os

__all__ = ["slot_env", "usable_cores"]


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one (a container or
    `taskset` may allow fewer than the machine has), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def slot_env(slots: int) -> dict[str, str]:
    """Environment of each of `slots` runs started side by side: its share of the usable cores
    as OMP_NUM_THREADS, which the trainer's automatic thread count reads (so the runs do not
    oversubscribe the machine); nothing when the caller set OMP_NUM_THREADS."""
    if "OMP_NUM_THREADS" in os.environ:
        return {}
    return {"OMP_NUM_THREADS": str(max(1, usable_cores() // slots))}
