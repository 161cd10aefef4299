"""`puffer build ENV [--debug]`: rebuild the Ocean extension that holds ENV; `puffer asan`.

puffer-ocean compiles every C env into one extension. A plain `puffer build` rebuilds the
installed one (optimized, -O3), which needs a source checkout of puffer-ocean installed in
editable mode (what `uv sync` does here). `--debug` builds an AddressSanitizer + UBSan copy in
its own place, `<puffer-ocean>/build/sanitize/`, and leaves the installed build alone:

    puffer build breakout --debug     # the sanitizer build, beside the installed one
    puffer asan bench breakout        # any puffer command, on the sanitizer build
    puffer build breakout             # rebuilds the installed, optimized extension

`puffer asan` starts the command in a child Python with the sanitizer runtime preloaded (an
ASan library must come first in the process) and the sanitizer build standing in for the
installed module, so nothing else ever loads it. Both builds print what they compile as they
go, and a line every `HEARTBEAT_S` seconds while the compiler works.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from collections import deque
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import IO

import typer

from puffer.cli.commands._common import OVERRIDES, console, reported_errors
from puffer.core import APIUsageError, env_creator, registered_envs
from puffer.core.registry import env_package
from puffer.train.progress import Ticker, duration

__all__ = [
    "asan",
    "asan_runtime",
    "build",
    "build_command",
    "ocean_source_dir",
    "register",
    "sanitized_build_command",
    "sanitized_module",
]

OCEAN = "puffer-ocean"
# Seconds between "still compiling" lines while the compiler is silent.
HEARTBEAT_S = 15.0
# Where the sanitizer build lives, under the puffer-ocean checkout (git ignores build/).
SANITIZE_DIR = Path("build") / "sanitize"
# Python leaks by design at exit; a UBSan report must stop the run, not scroll past. Options
# the caller sets in the same variables come after these, so they win.
SANITIZER_OPTIONS = {
    "ASAN_OPTIONS": "detect_leaks=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


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


def _check_ocean_env(env: str) -> None:
    env_creator(env)  # unknown names fail here, with the close names listed
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
    """The reinstall of the editable checkout at `source`: optimized, verbose (so the compile
    steps can be shown)."""
    return [_uv(), "pip", "install", "-v", "--python", sys.executable, "--no-deps",
            "--reinstall", "-C", "build.verbose=true", "-C",
            "cmake.define.PUFFER_SANITIZE=OFF", "-e", str(source)]  # fmt: skip


def sanitized_build_command(source: Path) -> list[str]:
    """A wheel of the checkout at `source` built with the sanitizers, in `SANITIZE_DIR`."""
    out = source / SANITIZE_DIR
    return [_uv(), "build", "-v", "--wheel", str(source), "-o", str(out / "dist"),
            "-C", "cmake.define.PUFFER_SANITIZE=ON", "-C", f"build-dir={out / 'cmake'}",
            "-C", "build.verbose=true"]  # fmt: skip


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


def _run_showing_steps(
    command: list[str], what: str, env: dict[str, str], build_root: Path
) -> None:
    """Run a build, printing its stages and each compile step, and while the compiler is
    silent a line every HEARTBEAT_S seconds naming what it compiles (the sources of the
    newest `build.ninja` under `build_root`); on failure the end of its log."""
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    )
    assert process.stdout is not None
    # A thread reads the pipe, so this loop can speak while the compiler is silent.
    lines: queue.Queue[str | None] = queue.Queue()

    def read(pipe: IO[str]) -> None:
        for line in pipe:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, args=(process.stdout,), daemon=True).start()
    ticker = Ticker(HEARTBEAT_S)
    ticker.due()
    doing = f"building {what}"
    tail: deque[str] = deque(maxlen=60)
    while True:
        try:
            line = lines.get(timeout=1.0)
        except queue.Empty:
            if ticker.due():
                console.print(f"  ... {doing} ({duration(ticker.elapsed)} so far)", markup=False)
            continue
        if line is None:
            break
        tail.append(line.rstrip())
        step, stage = _STEP.search(line), _STAGE.search(line)
        if step is not None:
            number, total, source, library = step.groups()
            target = Path(source).name if source else Path(library).name
            doing = f"{'compiling' if source else 'linking'} {target}"
            console.print(f"  [{number}/{total}] {doing}", markup=False)
            ticker.due()  # a line was just shown: the next heartbeat waits a full interval
        elif stage is not None:
            console.print(f"  {stage.group(1)}", markup=False)
            if "Building project" in line:
                # Ninja names a step when it ends; until then, say what it compiles.
                sources = _ninja_sources(build_root)
                doing = f"compiling {', '.join(sources)}" if sources else doing
            ticker.due()
    code = process.wait()
    if code:
        console.print("\n".join(tail), markup=False)
        raise APIUsageError(f"building {what} failed (exit {code}); its log ends above")


def build(
    env: str = typer.Argument(..., help="An Ocean env, e.g. breakout."),
    debug: bool = typer.Option(
        False,
        "--debug",
        help="AddressSanitizer + UBSan build (-O0 -g) beside the installed one; run commands "
        "on it with `puffer asan`.",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the command, run nothing."),
) -> None:
    """Rebuild the Ocean extension holding ENV, or build a sanitizer copy of it (--debug)."""
    with reported_errors():
        _check_ocean_env(env)
        source = ocean_source_dir()
        command = sanitized_build_command(source) if debug else build_command(source)
        console.print(" ".join(command), markup=False)
        if dry_run:
            return
        what = f"{OCEAN}{' with the sanitizers' if debug else ''} (every C env in one module)"
        console.print(f"building {what}; the compile takes a minute or more", markup=False)
        _run_showing_steps(command, what, dict(os.environ), source / "build")
        if debug:
            module = _extract_module(source / SANITIZE_DIR)
    if debug:
        console.print(
            f"sanitizer build: {module}\nthe installed {OCEAN} is unchanged. Run any puffer "
            f"command on the sanitizer build with `puffer asan`, e.g.\n  puffer asan bench "
            f"{env}\n`puffer build {env}` rebuilds the installed, optimized extension.",
            markup=False,
        )
    else:
        console.print(f"installed the optimized {OCEAN} from {source}", markup=False)


def _extract_module(out: Path) -> Path:
    """Take the extension out of the newest sanitizer wheel in `out/dist`, into `out`."""
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


def asan(ctx: typer.Context) -> None:
    """Run a puffer command on the sanitizer build of the Ocean envs, e.g. `puffer asan bench
    breakout` (after `puffer build breakout --debug`).

    The command runs in a child Python with the AddressSanitizer runtime preloaded; a memory
    error or undefined behaviour ends it with the sanitizer's report and a non-zero exit.
    """
    with reported_errors():
        if not ctx.args:
            raise APIUsageError(
                "puffer asan: name the command to run, e.g. puffer asan bench breakout"
            )
        module = sanitized_module(ocean_source_dir())
        env = dict(os.environ)
        env["LD_PRELOAD"] = " ".join(filter(None, [asan_runtime(module), env.get("LD_PRELOAD")]))
        for name, options in SANITIZER_OPTIONS.items():
            env[name] = ":".join(filter(None, [options, env.get(name)]))
        console.print(f"on the sanitizer build {module}", markup=False)
    child = [sys.executable, "-m", "puffer.cli.sanitized", str(module), *ctx.args]
    raise typer.Exit(subprocess.run(child, env=env).returncode)


def register(app: typer.Typer) -> None:
    """Add `build` and `asan` to `app`."""
    app.command("build")(build)
    app.command("asan", context_settings=OVERRIDES)(asan)
