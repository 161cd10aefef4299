"""`puffer build ENV --debug`, `puffer asan`, then `puffer build ENV`, in real subprocesses: the
sanitizer build lives beside the installed extension, every command keeps working, the
optimized build comes back with the command the output names, and a `uv run` after it builds
nothing again."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import puffer.ocean._ocean

# Two builds of the C envs: minutes on 2 cores, so scheduled first.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(shutil.which("uv") is None, reason="uv not found: it builds"),
]

_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]
INSTALLED = Path(puffer.ocean._ocean.__file__)
ROOT = Path(__file__).resolve().parents[3]
QUICK_BENCH = ["bench", "breakout", "--seconds", "0.2", "--repeats", "1"]


def puffer(*args: str, **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [*PUFFER, *args], capture_output=True, text=True, timeout=900, env={**os.environ, **env}
    )
    assert done.returncode == 0, f"puffer {' '.join(args)}:\n{done.stdout}\n{done.stderr[-4000:]}"
    return done


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_debug_build_then_optimized_build_leaves_a_working_puffer() -> None:
    before = _digest(INSTALLED)
    debug = puffer("build", "breakout", "--debug")
    # It said what it compiled, and where the sanitizer build went.
    assert re.search(r"compiling .*binding\.cpp", debug.stdout), debug.stdout
    sanitized = Path(re.search(r"sanitizer build: (\S+\.so)", debug.stdout).group(1))
    assert sanitized.is_file() and sanitized.parent.name == "sanitize"
    assert "puffer asan bench breakout" in debug.stdout
    # The installed extension is untouched, so every command still works as it did.
    assert _digest(INSTALLED) == before
    assert "breakout" in puffer("list").stdout
    puffer(*QUICK_BENCH)

    # On the sanitizer build, with ASan loaded: atexit=1 makes ASan print its statistics.
    checked = puffer("asan", *QUICK_BENCH, ASAN_OPTIONS="atexit=1")
    assert f"on the sanitizer build {sanitized}" in checked.stdout
    assert "agent steps/s" in checked.stdout and "Quarantine" in checked.stderr

    optimized = puffer("build", "breakout")
    assert "installed the optimized puffer-ocean" in optimized.stdout
    assert re.search(r"compiling .*binding\.cpp", optimized.stdout), optimized.stdout
    assert "agent steps/s" in puffer(*QUICK_BENCH).stdout
    assert "breakout" in puffer("list").stdout

    # One build path: the `uv run` after `puffer build` keeps that build (issue 61 item 4:
    # it used to build puffer-ocean again, 78 s then 98 s on 2 cores).
    built = INSTALLED.stat()
    again = subprocess.run(
        ["uv", "run", "python", "-c", "import puffer.ocean._ocean"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr[-4000:]
    assert "puffer-ocean" not in again.stderr, again.stderr  # uv names what it builds
    after = INSTALLED.stat()
    assert (after.st_ino, after.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
