"""`puffer build ENV [--debug]`: rebuild the Ocean extension that holds ENV.

puffer-ocean compiles every C env into one extension, and its build takes the CMake option
`PUFFER_SANITIZE` from the environment (see its pyproject): `--debug` rebuilds with
AddressSanitizer + UBSan, a plain `puffer build` restores the optimized build. This needs a
source checkout of puffer-ocean installed in editable mode (what `uv sync` does here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import typer

from puffer.cli.commands._common import console, reported_errors
from puffer.core import APIUsageError, env_creator, registered_envs
from puffer.core.registry import env_package

__all__ = ["build", "build_command", "ocean_source_dir", "register"]

OCEAN = "puffer-ocean"


def ocean_source_dir() -> Path:
    """The puffer-ocean source checkout behind an editable install.

    Raises:
        APIUsageError: puffer-ocean is missing or installed from a wheel (nothing to rebuild).
    """
    try:
        direct_url = distribution(OCEAN).read_text("direct_url.json")
    except PackageNotFoundError as error:
        raise APIUsageError(f"{OCEAN} is not installed; `pip install {OCEAN}`") from error
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


def build_command(source: Path) -> list[str]:
    """The reinstall command for the checkout at `source` (uv when present, else pip)."""
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "pip", "install", "--python", sys.executable, "--no-deps", "--reinstall",
                "-e", str(source)]  # fmt: skip
    return [sys.executable, "-m", "pip", "install", "--no-deps", "--force-reinstall", "-e",
            str(source)]  # fmt: skip


def build(
    env: str = typer.Argument(..., help="An Ocean env, e.g. breakout."),
    debug: bool = typer.Option(
        False, "--debug", help="AddressSanitizer + UBSan build (-O1 -g) instead of -O3."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the command, run nothing."),
) -> None:
    """Rebuild the Ocean extension holding ENV, optionally with sanitizers."""
    with reported_errors():
        _check_ocean_env(env)
        command = build_command(ocean_source_dir())
        sanitize = "ON" if debug else "OFF"
        console.print(f"PUFFER_SANITIZE={sanitize} {' '.join(command)}")
        if dry_run:
            return
        done = subprocess.run(command, env={**os.environ, "PUFFER_SANITIZE": sanitize})
        if done.returncode:
            raise APIUsageError(f"building {OCEAN} failed (exit {done.returncode}); see above")
    if debug:
        console.print(
            f"sanitizer build installed. Python must load ASan first, e.g.:\n"
            f"  LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 "
            f"puffer bench {env}\n`puffer build {env}` restores the optimized build."
        )


def register(app: typer.Typer) -> None:
    """Add `build` to `app`."""
    app.command("build")(build)
