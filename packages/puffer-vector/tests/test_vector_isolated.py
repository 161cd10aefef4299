"""Envs in an interpreter of their own: the venv built on first use, workers in it, faults.

The interpreter here is a real venv holding numpy < 2 (the pin that keeps Procgen out of the
trainer's environment), built by uv once per test session into a temporary folder; the adapter
is a small numpy-only env written by the test, which reports the numpy it runs under.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from puffer.core import WorkerError
from puffer.vector import Multiprocessing, Serial
from puffer.vector.isolated import (
    VENVS_VARIABLE,
    Interpreter,
    InterpreterBuildError,
    IsolatedEnv,
    Launch,
)

OLD_NUMPY = Interpreter("test-old-numpy", ("numpy<2",))
ROWS = 3
# A counter env: each row's observation is its seed plus the step count; reward the action;
# the episode ends every 4 steps; infos carry the numpy version of the interpreter.
ADAPTER = """
import numpy as np

class Counter:
    def __init__(self, rows, offset):
        self.rows, self.offset, self.t = rows, offset, 0

    def reset(self, seed):
        self.base = (0 if seed is None else seed) + self.offset
        self.t = 0
        self.rows["observations"][:, 0] = self.base
        self.rows["masks"][...] = True
        return [{"numpy_major": float(np.__version__.split(".")[0])}]

    def step(self):
        self.t += 1
        ended = self.t % 4 == 0
        self.rows["observations"][:, 0] = self.base + self.t
        self.rows["rewards"][...] = self.rows["actions"]
        self.rows["terminals"][...] = ended
        return [{"episode_length": 4.0}] if ended else []

    def close(self):
        pass
"""


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> tuple[Path, str, float]:
    """The old-numpy venv, built once for the session: (the folder of venvs, stderr of the
    build, seconds the build took)."""
    root = tmp_path_factory.mktemp("venvs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(VENVS_VARIABLE, str(root))
        stderr = io.StringIO()
        start = time.monotonic()
        with contextlib.redirect_stderr(stderr):
            OLD_NUMPY.ensure()
        seconds = time.monotonic() - start
    return root, stderr.getvalue(), seconds


@pytest.fixture
def venvs(built, monkeypatch) -> Interpreter:
    """OLD_NUMPY, its venv already built (`VENVS_VARIABLE` names the session's folder)."""
    monkeypatch.setenv(VENVS_VARIABLE, str(built[0]))
    return OLD_NUMPY


@pytest.fixture
def counter(tmp_path: Path, venvs: Interpreter):
    """A creator of IsolatedEnvs running the counter adapter in the old-numpy venv."""
    adapter = tmp_path / "counter.py"
    adapter.write_text(ADAPTER)

    def make(buf=None, offset: int = 0):
        launch = Launch(venvs, str(adapter), "Counter", (("offset", offset),))
        space = spaces.Box(-(2**20), 2**20, (1,), np.int32)
        return IsolatedEnv(launch, space, spaces.Discrete(5), ROWS, buf, name="counter")

    return make


def test_isolated_interpreter_is_built_on_first_use_with_one_line_then_reused(built, venvs):
    interpreter, (_, stderr, seconds) = venvs, built
    print(f"old-numpy venv built in {seconds:.1f} s")
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("puffer: building test-old-numpy's own interpreter (numpy<2) in ")
    assert interpreter.built and interpreter.python.exists()
    again = io.StringIO()
    with contextlib.redirect_stderr(again):
        assert interpreter.ensure() == interpreter.python
    assert again.getvalue() == ""


def test_isolated_interpreter_once_built_is_used_offline_without_uv(venvs, monkeypatch):
    monkeypatch.setenv("PATH", "")  # neither uv nor anything else can be run
    monkeypatch.setenv("UV_OFFLINE", "1")
    assert venvs.ensure() == venvs.python


def test_isolated_build_without_uv_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv(VENVS_VARIABLE, str(tmp_path))
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)  # no uv anywhere
    with pytest.raises(InterpreterBuildError, match=r"built with uv, which is not installed; "):
        Interpreter("test-no-uv", ("numpy<2",)).ensure()


def test_isolated_interpreter_half_removed_is_rebuilt(tmp_path, monkeypatch, built):
    monkeypatch.setenv(VENVS_VARIABLE, str(tmp_path))
    with contextlib.redirect_stderr(io.StringIO()):
        OLD_NUMPY.ensure()
    OLD_NUMPY.python.unlink()  # the marker stays, the interpreter is gone
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        assert OLD_NUMPY.ensure().exists()
    assert stderr.getvalue().startswith("puffer: building test-old-numpy's own interpreter")


def test_isolated_interpreter_folder_follows_the_pins(venvs):
    other = Interpreter(OLD_NUMPY.name, ("numpy<2", "six"))
    assert other.directory != OLD_NUMPY.directory
    assert other.directory.parent == OLD_NUMPY.directory.parent


def test_isolated_build_failure_is_one_line_naming_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv(VENVS_VARIABLE, str(tmp_path))
    impossible = Interpreter("test-impossible", ("numpy>2,<2",))
    with contextlib.redirect_stderr(io.StringIO()):
        with pytest.raises(InterpreterBuildError) as info:
            impossible.ensure()
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("could not build test-impossible's own interpreter (numpy>2,<2)")
    assert "make PyPI reachable" in message and VENVS_VARIABLE in message
    assert not impossible.directory.exists()  # nothing half-built is left to be trusted


def test_isolated_env_alone_runs_in_the_other_interpreter(counter):
    env = counter(offset=10)
    assert env.isolated is not None  # what vectorizers read; nothing runs yet
    obs, infos = env.reset(seed=5)
    assert infos == [{"numpy_major": 1.0}]  # numpy 1 there, numpy 2 here
    assert np.__version__.split(".")[0] == "2"
    assert obs[:, 0].tolist() == [15] * ROWS
    infos = []
    for t in range(1, 9):
        obs, rewards, terminals, _, step_infos = env.step(np.full(ROWS, t % 5, np.int32))
        infos += step_infos
        assert obs[:, 0].tolist() == [15 + t] * ROWS
        assert rewards.tolist() == [t % 5] * ROWS
        assert terminals.tolist() == [t % 4 == 0] * ROWS
    assert infos == [{"episode_length": 4.0}] * 2
    env.close()


@pytest.mark.parametrize("backend", [Serial, Multiprocessing])
def test_isolated_env_under_a_vectorizer_gets_seed_plus_i(counter, backend):
    with backend(counter, 4, num_workers=2, env_kwargs={"offset": 100}) as vec:
        obs, infos = vec.reset(seed=0)
        assert obs[:, 0].tolist() == [100 + i for i in range(4) for _ in range(ROWS)]
        assert infos == [{"numpy_major": 1.0}] * 4
        obs, rewards, *_ = vec.step(np.ones(4 * ROWS, np.int32))
        assert obs[:, 0].tolist() == [101 + i for i in range(4) for _ in range(ROWS)]
        assert rewards.tolist() == [1.0] * 4 * ROWS
        if backend is Multiprocessing:  # the workers themselves run in the other venv
            python = str(vec.spec.isolated.interpreter.python).encode()
            for pid in vec.worker_pids:
                assert Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0] == python


def test_isolated_worker_killed_is_reported_naming_its_interpreter(counter):
    vec = Multiprocessing(counter, 2, num_workers=2)
    vec.reset(seed=0)
    victim = vec.worker_pids[1]
    os.kill(victim, signal.SIGKILL)
    pattern = rf"worker 1 \(pid {victim}, in test-old-numpy's own interpreter .*\) .* SIGKILL"
    with pytest.raises(WorkerError, match=pattern) as info:
        for _ in range(3):
            vec.step(np.zeros(2 * ROWS, np.int32))
    assert "\n" not in str(info.value)
    names = vec.shm_names
    vec.close()
    assert not any(os.path.exists(f"/dev/shm/{name}") for name in names)
    assert not os.path.exists(f"/proc/{victim}")


def test_isolated_adapter_error_comes_back_as_a_traceback(counter, tmp_path, venvs):
    broken = tmp_path / "broken.py"
    broken.write_text("def Broken(rows):\n    raise RuntimeError('no such game')\n")
    launch = Launch(venvs, str(broken), "Broken", ())
    space = spaces.Box(0, 1, (1,), np.int32)

    def make(buf=None):
        return IsolatedEnv(launch, space, spaces.Discrete(2), 1, buf)

    with pytest.raises(WorkerError, match=r"worker 0 .* raised") as info:
        Multiprocessing(make, 1, num_workers=1)
    assert "RuntimeError: no such game" in info.value.remote_traceback


@pytest.mark.parametrize("zero_copy", [True, False])
def test_isolated_workers_serve_async_batches(counter, zero_copy):
    vec = Multiprocessing(counter, 4, num_workers=4, instances_per_recv=2, zero_copy=zero_copy)
    vec.async_reset(seed=0)
    for _ in range(8):
        obs, _, _, _, _, agent_ids, _ = vec.recv()
        # Two whole instances of ROWS rows; row r is instance r // ROWS, whose counter started
        # at its seed (r // ROWS) and moved by the steps it took, the same on all its rows.
        instances = agent_ids.reshape(2, ROWS) // ROWS
        assert (instances == instances[:, :1]).all()
        counters = obs[:, 0].reshape(2, ROWS)
        assert (counters == counters[:, :1]).all() and (counters >= instances).all()
        vec.send(np.zeros(2 * ROWS, np.int32))
    vec.close()
