"""The worker of an env that runs in an interpreter of its own (`puffer.vector.isolated`).

`launch_worker` runs `python -I isolated_worker.py '<job as JSON>'` in the env's venv, which
holds the env's old pins and nothing of puffer. So this file imports only the standard library
and numpy, loads `_protocol.py` beside it and the env's adapter by path, and serves the
shared-memory protocol (`_protocol.serve`) over rows the parent allocated: the same code the
trainer's own workers run. The job names the blocks, the semaphores (opened by name), the pipe
(an inherited descriptor), the adapter and its factory's keywords.
"""

from __future__ import annotations

import _multiprocessing
import importlib.util
import json
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType


def _load(path: str | Path, name: str) -> ModuleType:
    """Run the file at `path` as module `name` (registered first: dataclasses look their
    module up in sys.modules while the file runs)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(job: dict) -> None:
    """Build the job's instances over their rows and serve them until CLOSE."""
    protocol = _load(Path(__file__).with_name("_protocol.py"), "_puffer_protocol")
    adapter = _load(job["adapter"], "_puffer_adapter")
    factory = getattr(adapter, job["factory"])
    handles = {
        name: protocol.SharedArray(n, tuple(s), d) for name, (n, s, d) in job["arrays"].items()
    }
    flags, beats = (
        protocol.SharedArray(n, tuple(s), d) for n, s, d in (job["flags"], job["beats"])
    )
    # multiprocessing's own way of opening a named semaphore of another process (what
    # SemLock.__setstate__ does when a spawned child unpickles one).
    wake, done = (
        _multiprocessing.SemLock._rebuild(0, *job["semaphores"][name]) for name in ("wake", "done")
    )

    def build(instances: list) -> None:
        arrays = {name: handle.attach() for name, handle in handles.items()}
        per = job["agents_per_env"]
        for k in range(job["num_envs"]):
            start = (job["first_env"] + k) * per
            rows = {name: array[start : start + per] for name, array in arrays.items()}
            instances.append(factory(rows, **job["kwargs"]))

    protocol.serve(
        job["index"],
        build,
        lambda instance, seed: instance.reset(seed),
        lambda instance: instance.step(),
        flags,
        beats,
        job["beat_seconds"],
        Connection(job["pipe"]),
        wake,
        done,
        job["spin"],
        job["parent_pid"],
    )


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
