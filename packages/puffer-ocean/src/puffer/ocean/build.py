"""Rebuilding this package's extension from its source checkout, and a sanitizer copy of it.

Every C env is compiled into one extension, `puffer.ocean._ocean`. A plain build reinstalls the
editable checkout (optimized, -O3), which needs a source checkout of puffer-ocean installed in
editable mode (what `uv sync` does in the workspace). The sanitizer build (AddressSanitizer +
UBSan, -O0 -g) is a wheel built into its own place, `<checkout>/build/sanitize/`, whose
extension is taken out beside it; the installed build is left alone. A process runs on it with
the ASan runtime preloaded (an ASan library must come first in a process) and the sanitizer
module standing in for the installed one. `puffer build ENV [--debug]` and `puffer asan` are
the commands over these.

Both builds run uv with verbose output; `run_build` turns it into one line per stage and per
compile step, and says what the compiler works on while it is silent.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from collections import deque
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import IO

from puffer.core import APIUsageError, env_creator, registered_envs
from puffer.core.registry import env_package

__all__ = [
    "BUILD_ENV",
    "OCEAN",
    "QUIET_S",
    "SANITIZER_OPTIONS",
    "SANITIZE_DIR",
    "asan_runtime",
    "build_command",
    "check_ocean_env",
    "extract_module",
    "ocean_source_dir",
    "run_build",
    "sanitized_build_command",
    "sanitized_env",
    "sanitized_module",
]

OCEAN = "puffer-ocean"
# Seconds of compiler silence after which `run_build` says what is being compiled.
QUIET_S = 15.0
# Where the sanitizer build lives, under the puffer-ocean checkout (git ignores build/).
SANITIZE_DIR = Path("build") / "sanitize"
# Python leaks by design at exit; a UBSan report must stop the run, not scroll past. Options
# the caller sets in the same variables come after these, so they win.
SANITIZER_OPTIONS = {
    "ASAN_OPTIONS": "detect_leaks=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}
# The optimized build's settings, through scikit-build-core's environment variables rather than
# `-C` config settings: uv records those with the install (uv_build.json) and `uv sync`, which
# passes none, then takes the install for a stale one and builds it again.
BUILD_ENV = {"SKBUILD_BUILD_VERBOSE": "true", "PUFFER_SANITIZE": "OFF"}
# Lines of a failed build's log shown with its error.
_TAIL_LINES = 60


def ocean_source_dir() -> Path:
    """The puffer-ocean source checkout behind an editable install.

    Raises:
        APIUsageError: puffer-ocean is missing or installed from a wheel (nothing to rebuild).
    """
    try:
        direct_url = distribution(OCEAN).read_text("direct_url.json")
    except PackageNotFoundError as error:
        raise APIUsageError(f"{OCEAN} is not installed; install it (see its README)") from error
    info = json.loads(direct_url or "{}")
    url = info.get("url", "")
    if not info.get("dir_info", {}).get("editable") or not url.startswith("file://"):
        raise APIUsageError(
            f"{OCEAN} is installed from a wheel; `puffer build` rebuilds a source checkout "
            "(git clone the puffer workspace and run `uv sync`)"
        )
    return Path(url.removeprefix("file://"))


def check_ocean_env(env: str) -> None:
    """Raise unless `env` is a registered env of this package.

    Raises:
        EnvNotFoundError: No env has that name (the message lists close ones).
        APIUsageError: The env comes from another package.
    """
    env_creator(env)
    if env_package(env) != OCEAN:
        owner = registered_envs().get(env, "puffer.core emulation")
        raise APIUsageError(
            f"{env} comes from {owner}, not {OCEAN}; `puffer build` compiles Ocean (C) envs only"
        )


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        raise APIUsageError("`puffer build` needs uv on PATH (`pip install uv`)")
    return uv


def build_command(source: Path) -> list[str]:
    """The reinstall of the editable checkout at `source`, as `uv sync` installs it: run with
    `BUILD_ENV` (optimized, verbose so the compile steps can be shown)."""
    return [_uv(), "pip", "install", "-v", "--python", sys.executable, "--no-deps",
            "--reinstall", "-e", str(source)]  # fmt: skip


def sanitized_build_command(source: Path) -> list[str]:
    """A wheel of the checkout at `source` built with the sanitizers, in `SANITIZE_DIR`."""
    out = source / SANITIZE_DIR
    return [_uv(), "build", "-v", "--wheel", str(source), "-o", str(out / "dist"),
            "-C", "cmake.define.PUFFER_SANITIZE=ON", "-C", f"build-dir={out / 'cmake'}",
            "-C", "build.verbose=true"]  # fmt: skip


def extract_module(out: Path) -> Path:
    """Take the extension out of the newest sanitizer wheel in `out/dist`, into `out`;
    returns its path (an older one there is replaced)."""
    wheel = max((out / "dist").glob("puffer_ocean-*.whl"), key=lambda p: p.stat().st_mtime)
    with zipfile.ZipFile(wheel) as archive:
        (member,) = [
            m for m in archive.namelist() if re.fullmatch(r"puffer/ocean/_ocean\..*\.so", m)
        ]
        for old in out.glob("_ocean.*.so"):
            old.unlink()
        target = out / Path(member).name
        target.write_bytes(archive.read(member))
    return target


def sanitized_module(source: Path) -> Path:
    """The sanitizer build of the extension that `puffer build ENV --debug` left.

    Raises:
        APIUsageError: there is none yet.
    """
    found = sorted((source / SANITIZE_DIR).glob("_ocean.*.so"))
    if not found:
        raise APIUsageError(
            f"no sanitizer build of {OCEAN} in {source / SANITIZE_DIR}; make it with "
            "`puffer build <env> --debug` (e.g. puffer build breakout --debug)"
        )
    return found[-1]


def asan_runtime(module: Path) -> str:
    """The AddressSanitizer runtime `module` links (from `ldd`), to preload.

    Raises:
        APIUsageError: `module` links none (not a sanitizer build) or ldd is missing.
    """
    ldd = shutil.which("ldd")
    if ldd is None:
        raise APIUsageError("`puffer asan` needs ldd (glibc's libc-bin) to find libasan")
    linked = subprocess.run([ldd, str(module)], capture_output=True, text=True).stdout
    match = re.search(r"libasan\.so\S* => (\S+)", linked)
    if match is None:
        raise APIUsageError(
            f"{module} links no libasan; rebuild it with `puffer build <env> --debug`"
        )
    return match.group(1)


def sanitized_env(runtime: str, environ: dict[str, str]) -> dict[str, str]:
    """A copy of `environ` for a process on a sanitizer build: the ASan `runtime` (from
    `asan_runtime`) preloaded first, and `SANITIZER_OPTIONS` before the options `environ`
    already sets (the later ones win).

    Example:
        >>> env = sanitized_env("/lib/libasan.so.8", {"ASAN_OPTIONS": "atexit=1"})
        >>> env["LD_PRELOAD"], env["ASAN_OPTIONS"]
        ('/lib/libasan.so.8', 'detect_leaks=0:atexit=1')
    """
    env = dict(environ)
    env["LD_PRELOAD"] = " ".join(filter(None, [runtime, env.get("LD_PRELOAD")]))
    for name, options in SANITIZER_OPTIONS.items():
        env[name] = ":".join(filter(None, [options, env.get(name)]))
    return env


def _ninja_sources(build_root: Path) -> list[str]:
    """The files the newest `build.ninja` under `build_root` compiles (names only)."""
    found = list(build_root.glob("**/build.ninja"))
    if not found:
        return []
    text = max(found, key=lambda p: p.stat().st_mtime).read_text(errors="replace")
    return [Path(src).name for src in re.findall(r"^build \S+\.o: \S+ (\S+)", text, re.M)]


# A compile or link step of Ninja's verbose output, `[3/4] /usr/bin/c++ ... -c <file>`.
_STEP = re.compile(r"\[(\d+)/(\d+)\] .*?(?:-c (\S+)|-o (\S+\.so)\b)")
# scikit-build-core's stages: `*** Configuring CMake...`, `*** Building project with Ninja...`.
_STAGE = re.compile(r"(\*\*\* .*)")


def run_build(
    command: list[str],
    what: str,
    environ: dict[str, str],
    build_root: Path,
    say: Callable[[str], None],
    quiet: Callable[[str], None],
    quiet_s: float = QUIET_S,
) -> None:
    """Run a build command, reporting its stages and compile steps as it goes.

    Args:
        command: `build_command(...)` or `sanitized_build_command(...)`.
        what: What is built, for the error.
        environ: The command's environment.
        build_root: Where its `build.ninja` appears (to name the sources being compiled).
        say: Takes each line to show: a stage (`*** Building project with Ninja...`) or a
            step (`[3/4] compiling binding.cpp`), indented by two spaces; on failure, the
            end of the log.
        quiet: Called with what the compiler works on (`compiling binding.cpp`) after each
            `quiet_s` seconds in which nothing was said.
        quiet_s: Seconds of silence before `quiet` is called.

    Raises:
        APIUsageError: The build failed (after `say` was given the end of its log).
    """
    with subprocess.Popen(
        command,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    ) as process:
        assert process.stdout is not None
        tail = _report(process.stdout, what, build_root, say, quiet, quiet_s)
        code = process.wait()
    if code:
        say("\n".join(tail))
        raise APIUsageError(f"building {what} failed (exit {code}); its log ends above")


def _report(
    pipe: IO[str],
    what: str,
    build_root: Path,
    say: Callable[[str], None],
    quiet: Callable[[str], None],
    quiet_s: float,
) -> deque[str]:
    """Read a build's output to its end, saying its stages and steps (see `run_build`);
    returns the last lines."""
    # A thread reads the pipe, so this loop can speak while the compiler is silent.
    lines: queue.Queue[str | None] = queue.Queue()

    def read(source: IO[str]) -> None:
        for line in source:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, args=(pipe,), daemon=True).start()
    doing = f"building {what}"
    last_said = time.monotonic()
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    while True:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if time.monotonic() - last_said >= quiet_s:
                quiet(doing)
                last_said = time.monotonic()
            continue
        if line is None:
            break
        tail.append(line.rstrip())
        step, stage = _STEP.search(line), _STAGE.search(line)
        if step is not None:
            number, total, source, library = step.groups()
            target = Path(source).name if source else Path(library).name
            doing = f"{'compiling' if source else 'linking'} {target}"
            say(f"  [{number}/{total}] {doing}")
            last_said = time.monotonic()
        elif stage is not None:
            say(f"  {stage.group(1)}")
            if "Building project" in line:
                # Ninja names a step when it ends; until then, say what it compiles.
                sources = _ninja_sources(build_root)
                doing = f"compiling {', '.join(sources)}" if sources else doing
            last_said = time.monotonic()
    return tail
