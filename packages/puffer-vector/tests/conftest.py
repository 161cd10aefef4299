"""Every puffer-vector test must leave nothing of ours in /dev/shm."""

from __future__ import annotations

import glob
import os

import pytest

from puffer.vector.multiprocessing import SHM_PREFIX


@pytest.fixture(autouse=True)
def no_leaked_shared_memory():
    yield
    leaked = glob.glob(f"/dev/shm/{SHM_PREFIX}-{os.getpid()}-*")
    assert not leaked, f"shared memory left behind: {leaked}"
