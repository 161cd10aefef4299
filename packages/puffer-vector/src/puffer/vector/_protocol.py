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

Heartbeats (one uint32 per worker in a second block, written by the worker only): a thread of
each worker adds 1 every `beat_seconds`, from the start of `serve`, whatever the worker
is doing. A stopped (SIGSTOP) or hung worker's count stands still, which the parent notices
while it waits; a dead one is seen through its process sentinel.

This module imports only the standard library and numpy (any version since 1.22), so a worker
in an interpreter of its own (`puffer.vector.isolated`: an env pinned to old packages) runs
the same protocol code by loading this file by path.
"""

from __future__ import annotations

import _posixshmem
import enum
import mmap
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "SLOW_CHECK_SECONDS",
    "SPIN_SECONDS",
    "Flag",
    "SharedArray",
    "attach_beats",
    "attach_flags",
    "serve",
    "wait_for",
]

# Waiting, on both sides: spin while an answer is likely within microseconds, then block on a
# semaphore that the other side posts right after each flag it writes. Blocking matters on a
# machine with more runnable processes than cores (2-core CI, shared machines): a blocked
# waiter costs nothing and the kernel wakes it as soon as the post lands, while a poller that
# sleeps or yields keeps taking the cores from the processes doing the work and wakes late
# (polling with short sleeps made SB3's PPO collection 0.3-0.9x SubprocVecEnv, which blocks on
# pipes, on 2 loaded cores). A post with nobody blocked is an atomic add in user space.
SPIN_SECONDS = 20e-6
# How often a blocked waiter wakes for its slow checks (worker liveness, parent still alive).
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


T = TypeVar("T")
_LAST_COMMAND = int(Flag.CLOSE)  # flags up to this one are the parent's commands


class _Orphaned(Exception):
    """The parent process is gone: the worker closes its envs and exits quietly."""


def wait_for(ready: Callable[[], T], posted: Any, slow_check: Callable[[], None], spin: float) -> T:
    """Return `ready()` once it is truthy: spin `spin` seconds, then block on `posted`.

    Args:
        ready: polls the shared flags; a falsy result means not yet.
        posted: a `multiprocessing.Semaphore` the writer releases after each flag it stores.
        slow_check: called every SLOW_CHECK_SECONDS of blocking (raise or exit from it).
        spin: seconds of polling before blocking (`spin_seconds`).

    Posts that arrived while spinning are drained before blocking and before returning, so
    the count stays small (it is bounded by the number of writers, not by the steps taken).
    """
    result = ready()
    if not result:
        start = time.perf_counter()
        while not (result := ready()):
            if time.perf_counter() - start < spin:
                continue
            while posted.acquire(False):
                pass
            # A flag stored before the drain is seen here; one stored after it leaves a post
            # behind, so the blocking acquire below returns at once: no wake-up is lost.
            if result := ready():
                break
            if not posted.acquire(timeout=SLOW_CHECK_SECONDS):
                slow_check()
    while posted.acquire(False):
        pass
    return result


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
        """Map the block. The array owns its own mapping, so nothing else is kept alive.

        The block is opened with `shm_open` rather than `SharedMemory`, which (before Python
        3.13) registers every block it opens with the opener's resource tracker: a worker in
        an interpreter of its own has a tracker of its own, and that tracker would unlink the
        parent's blocks when the worker exits. The creator's registration stays (`create`).
        """
        fd = _posixshmem.shm_open("/" + self.shm_name, os.O_RDWR, mode=0o600)
        try:
            mapping = mmap.mmap(fd, self.nbytes)  # mmap dups the fd
        finally:
            os.close(fd)
        return np.ndarray(self.shape, np.dtype(self.dtype), buffer=mapping)

    def unlink(self) -> None:
        """Remove the block (its creator only, which `create` registered with its resource
        tracker). The registration goes even when the block is already gone (a sweep of
        `_shm.remove_orphaned_blocks` elsewhere): a registration left behind makes the
        tracker print a page of warnings about leaked blocks when this process exits."""
        name = "/" + self.shm_name
        try:
            _posixshmem.shm_unlink(name)
        except FileNotFoundError:
            pass
        resource_tracker.unregister(name, "shared_memory")


def attach_flags(handle: SharedArray) -> memoryview:
    """The flag block as a memoryview: indexing it yields plain ints, the cheapest to poll."""
    return memoryview(handle.attach().data).cast("B")


def attach_beats(handle: SharedArray) -> memoryview:
    """The heartbeat block (uint32 per worker) as a memoryview of plain ints."""
    return memoryview(handle.attach().data).cast("B").cast("I")


def _beat(beats: memoryview, index: int, seconds: float, stop: threading.Event) -> None:
    """Count this worker's heartbeats until `stop` (the thread body)."""
    while True:
        beats[index] = (beats[index] + 1) & 0xFFFFFFFF
        if stop.wait(seconds):
            return


def serve(
    index: int,
    build: Callable[[list], None],
    reset_one: Callable[[Any, int | None], list],
    step_one: Callable[[Any], list],
    flags_handle: SharedArray,
    beats_handle: SharedArray,
    beat_seconds: float,
    pipe: Any,
    wake: Any,
    done: Any,
    spin: float,
    parent_pid: int,
) -> None:
    """Worker `index`'s side of the protocol: build its envs, then answer the parent's
    commands until CLOSE, an error, or the parent's death.

    `build(envs)` appends this worker's envs to `envs` in row order (appending one at a time,
    so that those built before a failure are closed); `reset_one(env, seed)` and
    `step_one(env)` return an env's infos (the actions are in its rows); each env has
    `close()`.

    `wake` is this worker's semaphore, posted by the parent after each command flag; `done`
    is the one the parent blocks on, posted here after each result flag. Both interpreters
    run this: the trainer's forked workers (`multiprocessing.worker_main`) and workers in an
    interpreter of their own (`isolated_worker`), which is why this module imports nothing
    of puffer and nothing numpy 1 lacks.
    """
    # Ctrl-C goes to the whole process group; the parent alone decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    flags = attach_flags(flags_handle)
    stop_beating = threading.Event()
    beats = attach_beats(beats_handle)
    threading.Thread(
        target=_beat, args=(beats, index, beat_seconds, stop_beating), daemon=True
    ).start()
    envs: list = []
    try:
        build(envs)
        flags[index] = Flag.READY
        done.release()

        def orphaned() -> None:
            if os.getppid() != parent_pid:
                raise _Orphaned  # the parent died without closing us

        def next_command() -> int:
            flag = flags[index]
            return flag if flag <= _LAST_COMMAND else 0

        while True:
            command = wait_for(next_command, wake, orphaned, spin)
            if command == Flag.STEP:
                infos = [info for env in envs for info in step_one(env)]
            elif command == Flag.RESET:
                seeds = pipe.recv()
                infos = []
                for env, seed in zip(envs, seeds, strict=True):
                    infos.extend(reset_one(env, seed))
            else:
                break
            # The flag goes first so that the parent is reading while a long info list is
            # written; the other order could block on a full pipe.
            if infos:
                flags[index] = Flag.DONE_INFOS
                done.release()
                pipe.send(infos)
            else:
                flags[index] = Flag.DONE
                done.release()
    except _Orphaned:
        pass
    except BaseException:
        flags[index] = Flag.ERROR
        done.release()
        pipe.send(traceback.format_exc())
    finally:
        stop_beating.set()
        for env in envs:
            env.close()
