"""Envs in an interpreter of their own: for envs whose packages conflict with the trainer's.

Some envs pin what the trainer cannot take (Procgen's wheels need numpy < 2 and gym < 1). Such
an env runs in worker processes of a venv of its own, built on first use with uv and cached,
that speak `Multiprocessing`'s shared-memory protocol (`_protocol`) over rows the trainer
allocated, so observations still reach the trainer without a copy:

    Interpreter(name, requirements)   the venv: <cache>/<name>-py3XX-<digest of the pins>,
                                      built once (`uv venv` + `uv pip install`), offline after
    Launch(interpreter, adapter, ...) what a worker runs: an adapter file (numpy and the env's
                                      own packages only) and the keywords of its factory
    IsolatedEnv                       the trainer-side PufferEnv: spaces known up front, the
                                      worker started at the first reset (so probing is free)

`Multiprocessing` over an `IsolatedEnv` starts its workers in the other interpreter directly
(`launch_worker`; `isolated_worker.py` is the script they run); `IsolatedEnv` on its own (or
under `Serial`) runs one such worker and copies its rows. A worker killed or stopped is
reported as any other worker is, with the interpreter it ran.

An adapter is a file that imports only what its venv holds and defines a factory
`factory(rows, **kwargs)`: `rows` maps "observations", "actions", "rewards", "terminals",
"truncations" and "masks" to one instance's row slices (numpy arrays in shared memory); the
instance it returns has `reset(seed) -> list[dict]`, `step() -> list[dict]` (actions are in
`rows["actions"]`; auto-reset in the same step, as the buffer contract says) and `close()`.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer, PufferEnv, PufferError
from puffer.vector._protocol import SharedArray

__all__ = [
    "VENVS_VARIABLE",
    "Interpreter",
    "InterpreterBuildError",
    "IsolatedEnv",
    "IsolatedProcess",
    "Launch",
    "find_program",
    "launch_worker",
    "venv_root",
]

# Where the venvs live when set; else $XDG_CACHE_HOME/puffer/venvs or ~/.cache/puffer/venvs.
VENVS_VARIABLE = "PUFFER_VENVS"
# Written last into a venv that built completely; a venv without it is rebuilt.
_MARKER = "puffer-interpreter.json"
WORKER_SCRIPT = Path(__file__).with_name("isolated_worker.py")


class InterpreterBuildError(PufferError):
    """An env's own interpreter could not be built; the message names the fix."""


def venv_root() -> Path:
    """The folder holding the interpreters of `Interpreter` (see `VENVS_VARIABLE`)."""
    if os.environ.get(VENVS_VARIABLE):
        return Path(os.environ[VENVS_VARIABLE])
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "puffer" / "venvs"


@dataclass(frozen=True)
class Interpreter:
    """A venv of its own for envs with pins the trainer cannot take.

    Attributes:
        name: what it is for, in its folder name and messages (`procgen`).
        requirements: what `uv pip install` gets, pinned as the env needs
            (`("procgen2==0.10.7", "numpy<2", "gym<1")`).
    """

    name: str
    requirements: tuple[str, ...]

    @property
    def directory(self) -> Path:
        """`<venv_root>/<name>-py3XX-<digest>`: other pins or another Python, another venv."""
        version = f"py{sys.version_info.major}{sys.version_info.minor}"
        pins = json.dumps([version, *self.requirements]).encode()
        return venv_root() / f"{self.name}-{version}-{hashlib.sha256(pins).hexdigest()[:12]}"

    @property
    def python(self) -> Path:
        return self.directory / "bin" / "python"

    @property
    def built(self) -> bool:
        """Whether the venv finished building (and its python was not removed since)."""
        return (self.directory / _MARKER).is_file() and self.python.exists()

    def ensure(self) -> Path:
        """The venv's python, built first if it is not (one line on stderr while it builds).

        Concurrent callers (several workers, test processes) build it once: a file lock
        serializes them, and a venv is used only once its marker is written.

        Raises:
            InterpreterBuildError: uv is missing, or the build failed (uv's last error line).
        """
        if self.built:
            return self.python
        root = venv_root()
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f"{self.directory.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not self.built:
                self._build()
        return self.python

    def _build(self) -> None:
        pins = ", ".join(self.requirements)
        uv = _uv_binary(self.name)
        print(
            f"puffer: building {self.name}'s own interpreter ({pins}) in {self.directory} "
            "(once; needs PyPI, then works offline)",
            file=sys.stderr,
            flush=True,
        )
        shutil.rmtree(self.directory, ignore_errors=True)  # a build that died half-way
        steps = (
            [uv, "venv", "--quiet", "--python", sys.executable, str(self.directory)],
            [uv, "pip", "install", "--quiet", "--python", str(self.python), *self.requirements],
        )
        for command in steps:
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                shutil.rmtree(self.directory, ignore_errors=True)
                lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
                reason = lines[-1] if lines else f"{command[1]} exited with {done.returncode}"
                raise InterpreterBuildError(
                    f"could not build {self.name}'s own interpreter ({pins}) in "
                    f"{self.directory}: {reason}; make PyPI reachable (uv's index settings "
                    f"such as UV_INDEX_URL apply, {VENVS_VARIABLE} moves the venvs) and run again"
                )
        marker = {"requirements": list(self.requirements), "python": sys.version}
        (self.directory / _MARKER).write_text(json.dumps(marker))


def find_program(program: str) -> str | None:
    """The path of `program` on PATH, else beside this interpreter (where a package such as
    `uv` installs its binary into a venv that is not activated); None when it is neither."""
    return shutil.which(program) or shutil.which(program, path=str(Path(sys.executable).parent))


def _uv_binary(name: str) -> str:
    """uv on PATH, else the one the `uv` package installed beside this interpreter."""
    found = find_program("uv")
    if found is None:
        raise InterpreterBuildError(
            f"{name}'s own interpreter is built with uv, which is not installed; install it "
            "(pip install uv, or https://docs.astral.sh/uv/) and run again"
        )
    return found


@dataclass(frozen=True)
class Launch:
    """What a worker in another interpreter runs: `factory(rows, **kwargs)` from `adapter`.

    Attributes:
        interpreter: the venv the worker runs in.
        adapter: path of the adapter file (see the module docstring).
        factory: name of the factory function in it.
        kwargs: its keywords as sorted (name, value) pairs of JSON values.
    """

    interpreter: Interpreter
    adapter: str
    factory: str
    kwargs: tuple[tuple[str, Any], ...]

    def describe(self) -> str:
        return f"{self.interpreter.name}'s own interpreter {self.interpreter.python}"


class IsolatedProcess:
    """A worker running in another interpreter, with the parts of `multiprocessing.Process`
    that `Multiprocessing` uses (pid, sentinel, exitcode, join, kill)."""

    def __init__(self, popen: subprocess.Popen, launch: Launch):
        self._popen = popen
        self.pid = popen.pid
        self.launch = launch
        # Readable once the process exits: what `connection.wait` watches, as a Process's
        # sentinel is.
        self.sentinel = os.pidfd_open(popen.pid)
        weakref.finalize(self, os.close, self.sentinel)

    @property
    def exitcode(self) -> int | None:
        """None while running, else the exit code (-N when killed by signal N)."""
        return self._popen.poll()

    def join(self, timeout: float | None = None) -> None:
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        self._popen.kill()


def launch_worker(
    launch: Launch,
    index: int,
    agents_per_env: int,
    first_env: int,
    num_envs: int,
    arrays: dict[str, SharedArray],
    flags_handle: SharedArray,
    beats_handle: SharedArray,
    beat_seconds: float,
    pipe: Any,
    wake: Any,
    done: Any,
    spin: float,
    parent_pid: int,
) -> IsolatedProcess:
    """Start worker `index` of a `Multiprocessing` in `launch`'s interpreter (built first if
    need be); the arguments after `agents_per_env` (rows of one env) are `worker_main`'s.
    `wake` and `done` must be named semaphores (a spawn context's): the worker opens them by
    name."""
    python = launch.interpreter.ensure()
    semaphores = {
        name: [sem._semlock.kind, sem._semlock.maxvalue, sem._semlock.name]
        for name, sem in (("wake", wake), ("done", done))
    }
    job = {
        "index": index,
        "adapter": launch.adapter,
        "factory": launch.factory,
        "kwargs": dict(launch.kwargs),
        "agents_per_env": agents_per_env,
        "first_env": first_env,
        "num_envs": num_envs,
        "arrays": {name: _handle(h) for name, h in arrays.items()},
        "flags": _handle(flags_handle),
        "beats": _handle(beats_handle),
        "beat_seconds": beat_seconds,
        "pipe": pipe.fileno(),
        "semaphores": semaphores,
        "spin": spin,
        "parent_pid": parent_pid,
    }
    # -I: none of the trainer's PYTHONPATH, user site or script folder reaches the other venv.
    popen = subprocess.Popen(
        [str(python), "-I", str(WORKER_SCRIPT), json.dumps(job)], pass_fds=(pipe.fileno(),)
    )
    return IsolatedProcess(popen, launch)


def _handle(handle: SharedArray) -> list:
    return [handle.shm_name, list(handle.shape), handle.dtype]


class IsolatedEnv(PufferEnv):
    """A PufferEnv whose env runs in an interpreter of its own (see the module docstring).

    Subclasses (an env family) pass the launch and the spaces, which the trainer must know
    without importing the env. Nothing starts until the first `reset`, so building one to
    read its spaces (what vectorizers do first) costs nothing; under `Multiprocessing` the
    workers run the env in the other interpreter directly and this object only describes it.
    On its own it runs one worker of a one-instance `Multiprocessing` and copies that
    worker's rows into its own (a few kB per row and step).

    Args:
        launch: the interpreter, adapter and factory keywords.
        observation_space: one row's observation space (a Box).
        action_space: one row's action space.
        num_agents: rows of one instance (the adapter's instance writes that many).
        buf: a `Buffer` of `num_agents` rows, or None to allocate one.
        name: the env's id in messages (`procgen-coinrun`); default the factory's name.
    """

    def __init__(
        self,
        launch: Launch,
        observation_space: spaces.Box,
        action_space: spaces.Space,
        num_agents: int,
        buf: Buffer | None = None,
        name: str | None = None,
    ):
        self.isolated = launch
        self.name = name or launch.factory
        self.single_observation_space = observation_space
        self.single_action_space = action_space
        self.num_agents = num_agents
        super().__init__(buf)
        self._worker: Any = None

    def _reset(self, seed: int | None) -> list[dict[str, Any]]:
        if self._worker is None:
            from puffer.vector.multiprocessing import Multiprocessing

            describe = functools.partial(
                IsolatedEnv,
                self.isolated,
                self.single_observation_space,
                self.single_action_space,
                self.num_agents,
                name=self.name,
            )
            describe.__name__ = self.name  # type: ignore[attr-defined]  # the worker's messages
            self._worker = Multiprocessing(describe, num_instances=1, num_workers=1)
        _, infos = self._worker.reset(seed)
        self._copy_rows()
        return infos

    def _step(self) -> list[dict[str, Any]]:
        infos = self._worker.step(self.actions)[-1]
        self._copy_rows()
        return infos

    def _copy_rows(self) -> None:
        theirs = self._worker.buf
        np.copyto(self.observations, theirs.observations)
        np.copyto(self.rewards, theirs.rewards)
        np.copyto(self.terminals, theirs.terminals)
        np.copyto(self.truncations, theirs.truncations)
        np.copyto(self.masks, theirs.masks)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        super().close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, num_agents={self.num_agents})"
