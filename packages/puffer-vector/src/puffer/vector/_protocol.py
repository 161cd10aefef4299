"""The shared-memory protocol between `Multiprocessing` and its worker processes.

Data flow (one arrow per step, nothing pickled on the hot path):

    parent writes actions rows -> flag[w] = STEP -> worker w steps its envs in place
    -> worker writes obs/rewards/terminals/truncations/masks rows -> flag[w] = DONE
    -> parent reads the rows as views

Flag table (one uint8 per worker in a shared block; each state has exactly one writer):

    state       written by   meaning
    STARTING    (zeroed)     worker process is still building its envs
    RESET       parent       reset your envs; the seeds wait on the pipe
    STEP        parent       step your envs with the actions in shared memory
    CLOSE       parent       close your envs and exit
    READY       worker       envs built, waiting for the first command
    DONE        worker       results are in shared memory
    DONE_INFOS  worker       results are in shared memory and infos follow on the pipe
    ERROR       worker       the formatted traceback follows on the pipe; the worker exits

Pipes carry only seeds, infos and tracebacks. The worker stores its results before it stores
the flag, and the parent loads the flag before it loads the results; x86-64 keeps stores in
order, which is what this protocol relies on (as PufferLib and EnvPool do).
"""

from __future__ import annotations

import enum
import mmap
import os
import signal
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from puffer.core import Buffer

__all__ = [
    "MAX_SLEEP_SECONDS",
    "MIN_SLEEP_SECONDS",
    "SHORT_SLEEP_UNTIL_SECONDS",
    "SLOW_CHECK_SECONDS",
    "SPIN_SECONDS",
    "YIELD_SECONDS",
    "Backoff",
    "Flag",
    "SharedArray",
    "worker_main",
]

# Waiting, on both sides: spin while an answer is likely within microseconds, yield the core
# briefly, then sleep. The yield phase is short on purpose: on a machine with more runnable
# processes than cores (2-core CI, shared machines), sched_yield sends the caller behind every
# other runnable task, while a sleeper is woken by its timer and scheduled promptly (measured
# on 2 loaded cores: a 100 µs yield phase gave 2-10x the throughput of a 1 ms one). Sleeps stay
# short for the first milliseconds, which is when a step usually completes, so a waiter wakes
# at most one short sleep late; only then do they double, so an idle worker costs <1% of a core.
SPIN_SECONDS = 20e-6
YIELD_SECONDS = 100e-6
MIN_SLEEP_SECONDS = 20e-6
SHORT_SLEEP_UNTIL_SECONDS = 5e-3
MAX_SLEEP_SECONDS = 2e-3
# How often a waiter does its slow checks (worker liveness, parent still alive).
SLOW_CHECK_SECONDS = 10e-3


class Flag(enum.IntEnum):
    """Worker states in the shared flag block (see the module docstring for the writers)."""

    STARTING = 0
    RESET = 1
    STEP = 2
    CLOSE = 3
    READY = 4
    DONE = 5
    DONE_INFOS = 6
    ERROR = 7


class Backoff:
    """Spin, then `os.sched_yield`, then sleep (short, then doubling); `reset` after work."""

    __slots__ = ("_next_check", "_sleep", "_start")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._start = 0.0
        self._sleep = MIN_SLEEP_SECONDS
        self._next_check = SLOW_CHECK_SECONDS

    def pause(self) -> bool:
        """Wait a little. Returns True every SLOW_CHECK_SECONDS of waiting (for slow checks)."""
        now = time.perf_counter()
        if not self._start:
            self._start = now
        waited = now - self._start
        if waited < SPIN_SECONDS:
            return False
        if waited < YIELD_SECONDS:
            os.sched_yield()
            return False
        time.sleep(self._sleep)
        if waited > SHORT_SLEEP_UNTIL_SECONDS:
            self._sleep = min(2 * self._sleep, MAX_SLEEP_SECONDS)
        if waited < self._next_check:
            return False
        self._next_check = waited + SLOW_CHECK_SECONDS
        return True


@dataclass(frozen=True)
class SharedArray:
    """A picklable handle to one array living in a named shared-memory block."""

    shm_name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return max(1, int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize)

    @classmethod
    def create(cls, name: str, template: np.ndarray) -> SharedArray:
        handle = cls(name, template.shape, template.dtype.str)
        SharedMemory(name=name, create=True, size=handle.nbytes).close()
        handle.attach()[...] = template
        return handle

    def attach(self) -> np.ndarray:
        """Map the block. The array owns its own mapping, so no SharedMemory object is kept
        alive (closing one while numpy views exist raises BufferError)."""
        shm = SharedMemory(name=self.shm_name)
        try:
            # SharedMemory has no public fd; mmap dups it, so the mapping outlives `shm`.
            mapping = mmap.mmap(shm._fd, self.nbytes)
        finally:
            shm.close()
        return np.ndarray(self.shape, np.dtype(self.dtype), buffer=mapping)

    def unlink(self) -> None:
        try:
            SharedMemory(name=self.shm_name).unlink()
        except FileNotFoundError:
            pass


def attach_flags(handle: SharedArray) -> memoryview:
    """The flag block as a memoryview: indexing it yields plain ints, the cheapest to poll."""
    return memoryview(handle.attach().data).cast("B")


def worker_main(
    index: int,
    env_creator: Any,
    env_args: Sequence,
    env_kwargs: dict,
    spec: Any,
    first_env: int,
    num_envs: int,
    arrays: dict[str, SharedArray],
    flags_handle: SharedArray,
    pipe: Any,
    parent_pid: int,
) -> None:
    """Run envs `[first_env, first_env + num_envs)` over their rows until CLOSE or an error."""
    # Ctrl-C goes to the whole process group; the parent alone decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    flags = attach_flags(flags_handle)
    envs = []
    try:
        buf = Buffer(**{name: handle.attach() for name, handle in arrays.items()})
        per = spec.num_agents
        for k in range(num_envs):
            row = (first_env + k) * per
            envs.append(env_creator(*env_args, buf=buf.rows(row, row + per), **env_kwargs))
            spec.check(envs[-1], f"worker {index}")
        flags[index] = Flag.READY
        backoff = Backoff()
        while True:
            command = flags[index]
            if command == Flag.STEP:
                infos = []
                for env in envs:
                    infos.extend(env.step(env.actions)[-1])
            elif command == Flag.RESET:
                seeds = pipe.recv()
                infos = []
                for env, seed in zip(envs, seeds, strict=True):
                    infos.extend(env.reset(seed)[-1])
            elif command == Flag.CLOSE:
                break
            else:
                if backoff.pause() and os.getppid() != parent_pid:
                    break  # orphaned: the parent died without closing us
                continue
            backoff.reset()
            # The flag goes first so that the parent is reading while a long info list is
            # written; the other order could block on a full pipe.
            if infos:
                flags[index] = Flag.DONE_INFOS
                pipe.send(infos)
            else:
                flags[index] = Flag.DONE
    except BaseException:
        flags[index] = Flag.ERROR
        pipe.send(traceback.format_exc())
    finally:
        for env in envs:
            env.close()
