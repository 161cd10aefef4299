"""What this process may use of the machine: its cores.

The vectorizer sizes its worker pool with `usable_cores`, the trainer its torch threads and the
config its derived worker counts, so all three agree on one number.
"""

from __future__ import annotations

import os

__all__ = ["usable_cores"]


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask where the OS has one (a container or
    `taskset` may allow fewer than the machine has), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1
