"""`puffer build ENV [--debug]`: rebuild the Ocean extension that holds ENV; `puffer asan`.

The building is puffer-ocean's (`puffer.ocean.build`): a plain `puffer build` rebuilds the
installed extension (optimized), `--debug` an AddressSanitizer + UBSan copy in its own place,
leaving the installed build alone:

    puffer build breakout --debug     # the sanitizer build, beside the installed one
    puffer asan bench breakout        # any puffer command, on the sanitizer build
    puffer build breakout             # rebuilds the installed, optimized extension

`puffer asan` starts the command in a child Python (`python -m puffer.cli.sanitized`) with the
sanitizer runtime preloaded and the sanitizer build standing in for the installed module, so
nothing else ever loads it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import typer

from puffer.cli.commands._common import OVERRIDES, console, reported_errors
from puffer.core import APIUsageError
from puffer.ocean.build import (
    BUILD_ENV,
    OCEAN,
    SANITIZE_DIR,
    asan_runtime,
    build_command,
    check_ocean_env,
    extract_module,
    ocean_source_dir,
    run_build,
    sanitized_build_command,
    sanitized_env,
    sanitized_module,
)
from puffer.train.progress import duration

__all__ = ["asan", "build", "register"]


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
        check_ocean_env(env)
        source = ocean_source_dir()
        command = sanitized_build_command(source) if debug else build_command(source)
        console.print(" ".join(command), markup=False)
        if dry_run:
            return
        what = f"{OCEAN}{' with the sanitizers' if debug else ''} (every C env in one module)"
        console.print(f"building {what}; the compile takes a minute or more", markup=False)
        start = time.monotonic()

        def say(line: str) -> None:
            console.print(line, markup=False)

        def quiet(doing: str) -> None:
            say(f"  ... {doing} ({duration(time.monotonic() - start)} so far)")

        environ = {**os.environ, **({} if debug else BUILD_ENV)}
        run_build(command, what, environ, source / "build", say, quiet)
        if debug:
            module = extract_module(source / SANITIZE_DIR)
    if debug:
        console.print(
            f"sanitizer build: {module}\nthe installed {OCEAN} is unchanged. Run any puffer "
            f"command on the sanitizer build with `puffer asan`, e.g.\n  puffer asan bench "
            f"{env}\n`puffer build {env}` rebuilds the installed, optimized extension.",
            markup=False,
        )
    else:
        console.print(f"installed the optimized {OCEAN} from {source}", markup=False)


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
        env = sanitized_env(asan_runtime(module), dict(os.environ))
        console.print(f"on the sanitizer build {module}", markup=False)
    child = [sys.executable, "-m", "puffer.cli.sanitized", str(module), *ctx.args]
    raise typer.Exit(subprocess.run(child, env=env).returncode)


def register(app: typer.Typer) -> None:
    """Add `build` and `asan` to `app`."""
    app.command("build")(build)
    app.command("asan", context_settings=OVERRIDES)(asan)
