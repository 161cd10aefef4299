"""Faults: env exceptions, killed workers, double close, interrupted parents; /dev/shm stays clean.

The autouse fixture in conftest.py checks /dev/shm after every test of this process; the
subprocess tests check the names their child printed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from puffer.core import APIUsageError, WorkerError
from puffer.vector import Multiprocessing, make
from puffer.vector.multiprocessing import remove_orphaned_blocks
from puffer.vector.testing import DeterministicEnv, FaultyEnv, SleepyEnv


def test_vector_env_exception_carries_worker_and_traceback() -> None:
    vec = make(FaultyEnv, 4, backend="multiprocessing", num_workers=2, env_kwargs={"fail_at": 3})
    vec.reset(seed=0)
    vec.step(np.zeros(4, np.int32))
    vec.step(np.zeros(4, np.int32))
    with pytest.raises(WorkerError, match=r"worker [01] \(pid \d+\) of Multiprocessing") as info:
        vec.step(np.zeros(4, np.int32))
    assert info.value.worker in (0, 1)
    assert "Traceback (most recent call last)" in info.value.remote_traceback
    assert "ValueError: FaultyEnv failed on purpose at step 3" in info.value.remote_traceback
    with pytest.raises(APIUsageError, match=r"after a worker failed .*call close\(\) next"):
        vec.step(np.zeros(4, np.int32))
    vec.close()
    vec.close()
    assert vec.shm_names == [] and vec.worker_pids == []


def _fails_in_workers(buf=None):
    if buf is not None:  # the probe in the parent has buf=None; workers get rows
        raise RuntimeError("cannot build this env in a worker")
    return DeterministicEnv(buf=buf)


def test_vector_construction_failure_in_a_worker_is_raised_and_cleaned_up() -> None:
    with pytest.raises(WorkerError, match=r"worker \d") as info:
        Multiprocessing(_fails_in_workers, 2, num_workers=2)
    assert "RuntimeError: cannot build this env in a worker" in info.value.remote_traceback


@pytest.mark.parametrize("per_recv", [4, 2])
def test_vector_killed_worker_is_reported(per_recv) -> None:
    vec = Multiprocessing(
        SleepyEnv, 4, num_workers=2, instances_per_recv=per_recv, env_kwargs={"seconds": 0.05}
    )
    vec.async_reset(seed=0)
    ids = vec.recv()[5]
    victim = vec.worker_pids[1]
    os.kill(victim, signal.SIGKILL)
    vec.send(np.zeros(len(ids), np.int32))
    with pytest.raises(WorkerError, match=rf"worker 1 \(pid {victim}\) .* killed by SIGKILL"):
        for _ in range(4):  # the pool may hand out worker 0 once before it notices
            vec.recv()
            vec.send(np.zeros(len(ids), np.int32))
    vec.close()
    assert not any(os.path.exists(f"/proc/{pid}") for pid in [victim])


@pytest.mark.parametrize("state", ["new", "after-reset", "send-pending", "recv-pending"])
def test_vector_close_is_idempotent_in_any_state(state) -> None:
    vec = Multiprocessing(DeterministicEnv, 4, num_workers=2)
    pids, names = vec.worker_pids, vec.shm_names
    if state != "new":
        vec.async_reset(seed=0)
    if state in ("after-reset", "send-pending"):
        vec.recv()
    if state == "send-pending":
        vec.send(np.zeros(4, np.int32))
    vec.close()
    vec.close()
    assert all(not os.path.exists(f"/dev/shm/{name}") for name in names)
    assert all(_gone(pid) for pid in pids)
    with pytest.raises(APIUsageError, match=r"after close\(\); make a new one"):
        vec.reset()


def test_vector_exception_in_parent_inside_with_closes() -> None:
    with pytest.raises(KeyboardInterrupt):
        with Multiprocessing(DeterministicEnv, 2, num_workers=2) as vec:
            names = vec.shm_names
            vec.reset(seed=0)
            raise KeyboardInterrupt
    assert vec.closed and all(not os.path.exists(f"/dev/shm/{n}") for n in names)


CHILD = textwrap.dedent(
    """
    import json, signal, sys, time
    import numpy as np
    from puffer.vector import Multiprocessing
    # Ctrl-C as a terminal delivers it, whatever this process inherited: a shell that starts
    # pytest in the background ignores SIGINT, and ignored or blocked signals survive exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from puffer.vector.testing import DeterministicEnv
    vec = Multiprocessing(DeterministicEnv, 4, num_workers=2)
    vec.reset(seed=0)
    print(json.dumps({"pids": vec.worker_pids, "shm": vec.shm_names}), flush=True)
    while True:  # never closes: only Ctrl-C, an exception or a kill ends this
        if sys.argv[1] == "idle":
            time.sleep(0.01)
            continue
        vec.step(np.zeros(4, np.int32))
        if sys.argv[1] == "raise":
            raise RuntimeError("parent failed")
    """
)


def _start_child(how: str, new_session: bool = False) -> tuple[subprocess.Popen, dict]:
    """CHILD running `how`, and the worker pids and block names it printed once started."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_session,
    )
    return child, json.loads(child.stdout.readline())


@pytest.mark.parametrize("how", ["sigint", "raise"])
def test_vector_interrupted_parent_leaves_nothing_behind(how) -> None:
    child, started = _start_child(how)
    if how == "sigint":
        child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode != 0
    assert ("KeyboardInterrupt" if how == "sigint" else "RuntimeError: parent failed") in stderr
    assert "leaked" not in stderr  # the resource tracker found nothing to clean up
    assert all(not os.path.exists(f"/dev/shm/{name}") for name in started["shm"])
    assert all(_gone(pid) for pid in started["pids"])


def test_vector_workers_exit_when_the_parent_is_killed() -> None:
    child, started = _start_child("idle")
    child.kill()
    child.communicate(timeout=60)

    def cleaned() -> bool:
        # Orphaned workers exit on their own; the resource tracker then unlinks the blocks.
        gone = all(_gone(pid) for pid in started["pids"])
        return gone and all(not os.path.exists(f"/dev/shm/{n}") for n in started["shm"])

    deadline = time.monotonic() + 60
    while not cleaned() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cleaned()


def test_vector_stopped_worker_is_reported_within_its_timeout() -> None:
    # A SIGSTOPped worker is alive to its sentinel but answers nothing: its heartbeat stands
    # still, and the parent reports it after worker_timeout instead of waiting forever.
    vec = Multiprocessing(DeterministicEnv, 4, num_workers=2, worker_timeout=1.0)
    vec.reset(seed=0)
    victim = vec.worker_pids[1]
    os.kill(victim, signal.SIGSTOP)
    try:
        with pytest.raises(
            WorkerError,
            match=rf"worker 1 \(pid {victim}\) .* no heartbeat for [\d.]+ s \(worker_timeout 1 s\)"
            r": it is stopped .* while running envs 2\.\.3",
        ):
            for _ in range(2_000):  # far more steps than fit in the timeout
                vec.step(np.zeros(4, np.int32))
    finally:
        names = vec.shm_names
        vec.close()  # kills the stopped worker
    assert _gone(victim)
    assert all(not os.path.exists(f"/dev/shm/{name}") for name in names)


def test_vector_worker_timeout_must_be_positive() -> None:
    with pytest.raises(APIUsageError, match=r"worker_timeout is 0; pass the seconds \(> 0\)"):
        Multiprocessing(DeterministicEnv, 2, num_workers=2, worker_timeout=0)


KILL_BEFORE_RESET = textwrap.dedent(
    """
    import os, signal, time
    from puffer.core import WorkerError
    from puffer.vector import Multiprocessing
    from puffer.vector.testing import DeterministicEnv
    # The puffer CLI once set this default action: a write to a dead worker's pipe then ended
    # the process silently, with no message.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    vec = Multiprocessing(DeterministicEnv, 4, num_workers=2)
    victim = vec.worker_pids[1]
    os.kill(victim, signal.SIGKILL)
    # The leader turns zombie while its heartbeat thread may still hold the process's files;
    # only once that thread is gone too are its pipe ends closed.
    def dead() -> bool:
        state = open(f"/proc/{victim}/stat").read().rsplit(")", 1)[1].split()[0]
        return state == "Z" and os.listdir(f"/proc/{victim}/task") == [str(victim)]
    while not dead():
        time.sleep(0.01)
    try:
        vec.async_reset(seed=0)  # sends the seeds down each worker's pipe
        vec.recv()
    except WorkerError as error:
        print("reported:", error)
    vec.close()
    """
)


def test_vector_worker_killed_before_the_first_reset_is_reported_not_sigpipe() -> None:
    child = subprocess.run(
        [sys.executable, "-c", KILL_BEFORE_RESET], capture_output=True, text=True, timeout=120
    )
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert re.search(r"reported: worker 1 \(pid \d+\) .* killed by SIGKILL", child.stdout)


def test_vector_blocks_of_a_killed_process_group_are_removed_by_the_next_vectorizer() -> None:
    # SIGKILL to the whole group takes the resource tracker too: nothing unlinks the blocks
    # then, until a later Multiprocessing (any process) finds their owner gone.
    child, started = _start_child("idle", new_session=True)
    os.killpg(child.pid, signal.SIGKILL)
    child.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while not all(_gone(pid) for pid in started["pids"]):
        assert time.monotonic() < deadline, "the killed workers did not go"
        time.sleep(0.05)
    Multiprocessing(DeterministicEnv, 2, num_workers=2).close()
    assert all(not os.path.exists(f"/dev/shm/{name}") for name in started["shm"])


def test_vector_orphan_sweep_tells_owners_by_pid_namespace_and_start_time(tmp_path) -> None:
    with Multiprocessing(DeterministicEnv, 2, num_workers=2) as vec:
        remove_orphaned_blocks()
        assert all(os.path.exists(f"/dev/shm/{name}") for name in vec.shm_names)
        pid, namespace, start = vec.shm_names[0].split("-")[2:5]
    dead = _reaped_pid()
    names = {
        f"puffer-vec-{pid}-{namespace}-{start}-ab12-flags": "kept",  # this live process
        f"puffer-vec-{pid}-{namespace}-{int(start) - 1}-ab12-flags": "swept",  # a reused pid
        f"puffer-vec-{dead}-{namespace}-{start}-ab12-flags": "swept",  # a process gone
        f"puffer-vec-{dead}-{int(namespace) + 1}-{start}-ab12-flags": "kept",  # another namespace
        f"puffer-vec-{dead}-0-0-ab12-flags": "kept",  # an owner /proc could not name
        "puffer-vec-other": "kept",
    }
    for name in names:
        (tmp_path / name).write_bytes(b"")
    # A gone owner's block that another user owns: /dev/shm is everyone's, and root may unlink
    # any file there. (Only root can give a file away; as anyone else the case is left out.)
    foreign = f"puffer-vec-{dead}-{namespace}-{start}-cd34-flags"
    (tmp_path / foreign).write_bytes(b"")
    try:
        os.chown(tmp_path / foreign, os.getuid() + 1, -1)
        names[foreign] = "kept"
    except PermissionError:
        (tmp_path / foreign).unlink()
    swept = sorted(name for name, fate in names.items() if fate == "swept")
    assert sorted(remove_orphaned_blocks(tmp_path)) == swept
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(names) - set(swept))


def _reaped_pid() -> int:
    """The pid of a process that ran and was reaped (not reused this soon)."""
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _gone(pid: int) -> bool:
    """True when the process is gone or a zombie waiting to be reaped by init."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] == "Z"
    except FileNotFoundError:
        return True
