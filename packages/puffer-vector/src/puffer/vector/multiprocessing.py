"""`Multiprocessing`: worker processes over one shared-memory buffer, EnvPool-style async.

Each of the six arrays of the buffer contract lives in its own `multiprocessing.shared_memory`
block; worker w owns envs `[w*E, (w+1)*E)` and so one contiguous block of rows. Control goes
through one uint8 flag per worker (`puffer.vector._protocol`, which holds the flag table and
the data flow); pipes carry only seeds, infos and tracebacks.

With `instances_per_recv < num_instances`, `recv` returns the first batch of workers that is ready while the
others keep stepping. With `zero_copy` the batches are fixed contiguous groups of workers and
come back as views; without it any ready workers are gathered (copies).

Faults are reported, never waited out: while the parent waits it checks every 10 ms that each
worker's process is alive and that its heartbeat (`_protocol`) moved within `worker_timeout`
seconds, so a killed, crashed, stopped or hung worker becomes a `WorkerError` naming its pid and
envs. Blocks a killed process group left in /dev/shm are removed by the next `Multiprocessing`
or `puffer` command (`_shm.remove_orphaned_blocks`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing import connection
from typing import Any

import numpy as np

from puffer.core import APIUsageError, Buffer, WorkerError, usable_cores
from puffer.vector._protocol import (
    SPIN_SECONDS,
    Flag,
    SharedArray,
    attach_beats,
    attach_flags,
    serve,
    wait_for,
)
from puffer.vector._shm import SHM_PREFIX, block_prefix, remove_orphaned_blocks
from puffer.vector.base import EnvCreator, EnvSpec, Infos, Vectorizer
from puffer.vector.isolated import launch_worker

__all__ = [
    "CLOSE_TIMEOUT_SECONDS",
    "SHM_PREFIX",
    "WORKER_TIMEOUT_SECONDS",
    "Multiprocessing",
    "remove_orphaned_blocks",
    "spin_seconds",
    "worker_main",
]

# How long close() lets workers finish their step and exit before it terminates them.
CLOSE_TIMEOUT_SECONDS = 2.0
# Default seconds a worker may go without a heartbeat before it is reported as stopped or hung:
# far above any pause of a live worker's heartbeat thread (a C call holding the GIL, a machine
# so loaded that the thread waits for a core), small enough that a stopped worker is an error
# within a minute rather than a hang.
WORKER_TIMEOUT_SECONDS = 30.0
# Heartbeats per worker_timeout: the count moves several times within any timeout.
_BEATS_PER_TIMEOUT = 10


@dataclass
class _Resources:
    """Everything close() must release, kept apart from the vectorizer so that
    `weakref.finalize` can release it without keeping the vectorizer alive."""

    handles: list[SharedArray] = field(default_factory=list)
    processes: list[Any] = field(default_factory=list)
    pipes: list[Any] = field(default_factory=list)
    wakes: list[Any] = field(default_factory=list)
    done: Any = None
    flags: memoryview | None = None


def _release(res: _Resources) -> None:
    """Send CLOSE, wait up to CLOSE_TIMEOUT_SECONDS, terminate stragglers, unlink every block."""
    deadline = time.monotonic() + CLOSE_TIMEOUT_SECONDS
    alive = [w for w, p in enumerate(res.processes) if p.exitcode is None]
    while alive and time.monotonic() < deadline:
        for w in alive:
            # A worker that was mid-step overwrites CLOSE with DONE when it finishes; repeat.
            if res.flags is not None and res.flags[w] not in (Flag.CLOSE, Flag.ERROR):
                res.flags[w] = Flag.CLOSE
                res.wakes[w].release()
            _drain(res.pipes[w])  # a worker blocked writing infos to a full pipe cannot exit
        connection.wait([res.processes[w].sentinel for w in alive], timeout=0.01)
        alive = [w for w in alive if res.processes[w].exitcode is None]
    for w in alive:
        res.processes[w].kill()
    for process in res.processes:
        process.join()
    for pipe in res.pipes:
        pipe.close()
    for handle in res.handles:
        handle.unlink()
    res.processes.clear()
    res.pipes.clear()
    res.handles.clear()
    # Dropping the semaphores unlinks them (spawn/forkserver register named ones).
    res.wakes.clear()
    res.done = None


def _drain(pipe: Any) -> None:
    try:
        while pipe.poll():
            pipe.recv()
    except (EOFError, OSError):
        pass


def spin_seconds(processes: int) -> float:
    """SPIN_SECONDS when each of `processes` has a core to itself, else 0: a spinner on a
    shared core only delays the process it waits for."""
    return SPIN_SECONDS if processes <= usable_cores() else 0.0


def worker_main(
    index: int,
    env_creator: EnvCreator,
    env_args: Sequence,
    env_kwargs: dict,
    spec: EnvSpec,
    first_env: int,
    num_envs: int,
    arrays: dict[str, SharedArray],
    *protocol: Any,
) -> None:
    """A worker process of the trainer's interpreter: build envs `[first_env, first_env +
    num_envs)` over their rows, then `serve` them (`protocol` is serve's arguments after
    its env hooks)."""

    def build(envs: list) -> None:
        buf = Buffer(**{name: handle.attach() for name, handle in arrays.items()})
        per = spec.num_agents
        for k in range(num_envs):
            row = (first_env + k) * per
            envs.append(env_creator(*env_args, buf=buf.rows(row, row + per), **env_kwargs))
            spec.check(envs[-1], f"worker {index}")

    serve(
        index,
        build,
        lambda env, seed: env.reset(seed)[-1],
        lambda env: env.step(env.actions)[-1],
        *protocol,
    )


class Multiprocessing(Vectorizer):
    """Run envs in `num_workers` processes that write straight into shared memory.

    Arguments are those of `puffer.vector.make`, plus `start_method` ("fork" by default where
    available: fast, and any creator works; "spawn"/"forkserver" need a picklable creator) and
    `worker_timeout` (seconds without a heartbeat after which a worker that runs but does not
    answer, stopped or hung, is a `WorkerError`; default `WORKER_TIMEOUT_SECONDS`).
    Before allocating, one probe env is built and closed in the parent to learn the spaces and
    agent count. Workers are daemons that ignore SIGINT: Ctrl-C reaches the parent, whose
    close() (or the `weakref.finalize` at exit) stops them and unlinks every block.

    Example:
        >>> import numpy as np
        >>> from puffer.vector import Multiprocessing
        >>> vec = Multiprocessing(
        ...     "gym-CartPole-v1", num_instances=8, num_workers=2, instances_per_recv=4
        ... )
        >>> vec.async_reset(seed=0)
        >>> obs, rewards, terminals, truncations, infos, agent_ids, masks = vec.recv()
        >>> obs.shape, agent_ids.shape
        ((4, 4), (4,))
        >>> vec.send(np.zeros(4, np.int32))
        >>> vec.close()
    """

    workers_per_core = True  # each worker is a process (an actor): one per usable core

    def __init__(
        self,
        env_creator: EnvCreator | str,
        num_instances: int = 1,
        num_workers: int | None = None,
        instances_per_recv: int | None = None,
        zero_copy: bool = True,
        seed: int | None = None,
        env_args: Sequence = (),
        env_kwargs: dict | None = None,
        start_method: str | None = None,
        worker_timeout: float = WORKER_TIMEOUT_SECONDS,
        **renamed: Any,
    ):
        if not worker_timeout > 0:
            raise APIUsageError(
                f"Multiprocessing(env={env_creator!r}): worker_timeout is {worker_timeout!r}; "
                "pass the seconds (> 0) a worker may go without a heartbeat"
            )
        super().__init__(
            env_creator,
            num_instances,
            num_workers,
            instances_per_recv,
            zero_copy,
            seed,
            env_args,
            env_kwargs,
            **renamed,
        )
        self.worker_timeout = float(worker_timeout)
        if start_method is None:
            methods = multiprocessing.get_all_start_methods()
            start_method = "fork" if "fork" in methods else "spawn"
        if self.spec.isolated is not None:
            # Workers in an interpreter of their own open the semaphores by name, which only
            # spawn's semaphores have (fork's are unlinked at once).
            start_method = "spawn"
        context = multiprocessing.get_context(start_method)
        self._res = res = _Resources()
        self._finalizer = weakref.finalize(self, _release, res)
        remove_orphaned_blocks()
        prefix = block_prefix()
        try:
            template = self.spec.allocate(self.num_agents)
            arrays = {}
            for name in template.names:
                arrays[name] = SharedArray.create(f"{prefix}-{name}", getattr(template, name))
                res.handles.append(arrays[name])
            flags_handle = SharedArray.create(
                f"{prefix}-flags", np.full(self.num_workers, Flag.STARTING, np.uint8)
            )
            res.handles.append(flags_handle)
            beats_handle = SharedArray.create(
                f"{prefix}-beats", np.zeros(self.num_workers, np.uint32)
            )
            res.handles.append(beats_handle)
            self.buf = Buffer(**{name: handle.attach() for name, handle in arrays.items()})
            self._flags = res.flags = attach_flags(flags_handle)
            self._beats = attach_beats(beats_handle)
            # The last heartbeat count seen of each worker, and when it was first seen.
            self._last_beats = [0] * self.num_workers
            self._beat_seen = [time.monotonic()] * self.num_workers
            # Wake-ups (see `wait_for`): one semaphore per worker for the parent's commands,
            # one for all the workers' results, which the parent blocks on.
            res.done = context.Semaphore(0)
            self._spin = spin_seconds(self.num_workers + 1)
            for w in range(self.num_workers):
                parent_end, child_end = context.Pipe()
                res.pipes.append(parent_end)
                res.wakes.append(context.Semaphore(0))
                rows = (w * self.envs_per_worker, self.envs_per_worker, arrays)
                protocol = (
                    flags_handle,
                    beats_handle,
                    self.worker_timeout / _BEATS_PER_TIMEOUT,
                    child_end,
                    res.wakes[w],
                    res.done,
                    self._spin,
                    os.getpid(),
                )
                if self.spec.isolated is not None:
                    launch = self.spec.isolated
                    process = launch_worker(launch, w, self.spec.num_agents, *rows, *protocol)
                else:
                    process = context.Process(
                        target=worker_main,
                        name=f"puffer-vector-worker-{w}",
                        args=(
                            w,
                            self.env_creator,
                            self.env_args,
                            self.env_kwargs,
                            self.spec,
                            *rows,
                            *protocol,
                        ),
                        daemon=True,
                    )
                    process.start()
                res.processes.append(process)
                child_end.close()  # so the parent sees EOF when the worker dies
            for w in range(self.num_workers):
                self._wait_unit((w,), Flag.READY)
        except BaseException:
            self.close()
            raise

    @property
    def worker_pids(self) -> list[int]:
        """Process ids of the workers (empty once closed)."""
        return [p.pid for p in self._res.processes]

    @property
    def shm_names(self) -> list[str]:
        """Names of the shared-memory blocks (under /dev/shm on Linux; empty once closed)."""
        return [handle.shm_name for handle in self._res.handles]

    # Backend hooks ---------------------------------------------------------------------------

    def _start_reset(self, seeds: list[int | None]) -> None:
        # Workers still stepping from an earlier send() must finish before they are reset.
        while self._pending:
            self._collect(self._pending.popleft(), wait=True)
        self._check_workers()
        for w in range(self.num_workers):
            envs = self._worker_envs(w)
            try:
                self._res.pipes[w].send(seeds[envs.start : envs.stop])
            except OSError:  # BrokenPipeError: the worker died since the check
                self._raise_failure(w, dead=True)
            self._flags[w] = Flag.RESET
            self._res.wakes[w].release()
        self._pending.extend(self._units)

    def _start_step(self, workers: tuple[int, ...]) -> None:
        flags, wakes = self._flags, self._res.wakes
        for w in workers:
            flags[w] = Flag.STEP
            wakes[w].release()
        self._queue(workers)

    def _wait(self) -> tuple[tuple[int, ...], Infos]:
        flags, done = self._flags, int(Flag.DONE)
        workers = wait_for(
            lambda: self._take_ready(lambda w: flags[w] >= done),
            self._res.done,
            self._check_workers,
            self._spin,
        )
        return workers, self._collect(workers, wait=False)

    def _shutdown(self) -> None:
        self._finalizer()

    # Helpers ----------------------------------------------------------------------------------

    def _wait_unit(self, unit: tuple[int, ...], least: Flag) -> None:
        flags = self._flags
        for w in unit:
            wait_for(lambda w=w: flags[w] >= least, self._res.done, self._check_workers, self._spin)
            if flags[w] == Flag.ERROR:
                self._raise_failure(w)

    def _collect(self, unit: tuple[int, ...], wait: bool) -> Infos:
        """Infos of finished workers; raises WorkerError for one that failed."""
        if wait:
            self._wait_unit(unit, Flag.DONE)
        infos: Infos = []
        for w in unit:
            flag = self._flags[w]
            if flag == Flag.DONE_INFOS:
                infos.extend(self._receive(w))
            elif flag == Flag.ERROR:
                self._raise_failure(w)
        return infos

    def _receive(self, w: int) -> Any:
        try:
            return self._res.pipes[w].recv()
        except (EOFError, OSError):
            self._raise_failure(w, dead=True)

    def _check_workers(self) -> None:
        """Turn a worker that exited (killed, segfault, error), or one whose heartbeat stood
        still for `worker_timeout` seconds (stopped, hung), into a WorkerError."""
        sentinels = [p.sentinel for p in self._res.processes]
        for sentinel in connection.wait(sentinels, timeout=0):
            self._raise_failure(sentinels.index(sentinel))
        now = time.monotonic()
        for w, beat in enumerate(self._beats):
            if beat != self._last_beats[w]:
                self._last_beats[w], self._beat_seen[w] = beat, now
            elif beat and now - self._beat_seen[w] > self.worker_timeout:
                self._raise_silent(w, now - self._beat_seen[w])

    def _where(self, w: int) -> str:
        """`, in procgen's own interpreter <python>` for a worker of another interpreter."""
        launch = getattr(self._res.processes[w], "launch", None)
        return "" if launch is None else f", in {launch.describe()}"

    def _raise_silent(self, w: int, seconds: float) -> None:
        envs = self._worker_envs(w)
        raise WorkerError(
            f"worker {w} (pid {self._res.processes[w].pid}{self._where(w)}) of {self!r} has "
            "shown no heartbeat "
            f"for {seconds:.1f} s (worker_timeout {self.worker_timeout:g} s): it is stopped "
            f"(SIGSTOP, a debugger) or hung while running envs {envs.start}..{envs.stop - 1}; "
            "close() this vectorizer (which kills it) and make a new one",
            worker=w,
        )

    def _raise_failure(self, w: int, dead: bool = False) -> None:
        process = self._res.processes[w]
        if not dead and self._flags[w] == Flag.ERROR:
            try:
                remote = self._res.pipes[w].recv()
            except (EOFError, OSError):
                remote = "(the worker died before its traceback arrived)"
            raise WorkerError(
                f"worker {w} (pid {process.pid}{self._where(w)}) of {self!r} raised; its "
                "traceback follows. "
                "close() this vectorizer and fix the env",
                worker=w,
                remote_traceback=remote,
            )
        process.join(timeout=1.0)
        code = process.exitcode
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exited with code {code}"
        )
        raise WorkerError(
            f"worker {w} (pid {process.pid}{self._where(w)}) of {self!r} {how} while running envs "
            f"{self._worker_envs(w).start}..{self._worker_envs(w).stop - 1}; close() this "
            "vectorizer and make a new one",
            worker=w,
        )
