"""`puffer.ocean.build` without compiling: which envs it builds, where the sanitizer build must
be, the sanitizer environment, and how a build's output is reported (a real subprocess that
prints what uv and Ninja print). The compiles themselves are puffer-cli's `test_cli_build.py`."""

from __future__ import annotations

import doctest
import sys
from pathlib import Path

import pytest

import puffer.ocean.build
from puffer.core import APIUsageError, EnvNotFoundError
from puffer.ocean.build import (
    BUILD_ENV,
    SANITIZER_OPTIONS,
    asan_runtime,
    build_command,
    check_ocean_env,
    ocean_source_dir,
    run_build,
    sanitized_build_command,
    sanitized_env,
    sanitized_module,
)

# What `uv pip install -v` of the checkout prints, in order, between other lines.
BUILD_OUTPUT = [
    "*** scikit-build-core 1.1.2 using CMake 3.25.1 (editable)",
    "some other line",
    "*** Building project with Ninja...",
    "[1/2] /usr/bin/c++ -O3 -o CMakeFiles/_ocean.dir/csrc/binding.cpp.o -c /src/csrc/binding.cpp",
    "[2/2] /usr/bin/c++ -shared -o _ocean.cpython-311-x86_64-linux-gnu.so binding.cpp.o",
]


def _printing(lines: list[str], code: int = 0, pause: float = 0.0) -> list[str]:
    """A command that prints `lines` (pausing `pause` s before the last) and exits `code`."""
    script = (
        "import sys, time\n"
        f"lines = {lines!r}\n"
        "for line in lines[:-1]: print(line, flush=True)\n"
        f"time.sleep({pause})\n"
        "print(lines[-1], flush=True)\n"
        f"sys.exit({code})\n"
    )
    return [sys.executable, "-c", script]


def test_only_this_packages_envs_are_built() -> None:
    check_ocean_env("breakout")
    with pytest.raises(APIUsageError, match="not puffer-ocean; `puffer build` compiles Ocean"):
        check_ocean_env("gym-CartPole-v1")
    with pytest.raises(EnvNotFoundError):
        check_ocean_env("breakoutt")


def test_the_optimized_build_installs_as_uv_sync_does() -> None:
    """No `-C` config settings: uv records them with the install (uv_build.json), and `uv sync`
    / `uv run`, which pass none, would take the install for a stale one and build it again
    (issue 61 item 4). The settings go by scikit-build-core's environment variables instead."""
    command = build_command(ocean_source_dir())
    assert not {"-C", "--config-setting", "--config-settings"} & set(command), command
    assert command[-2:] == ["-e", str(ocean_source_dir())]
    assert BUILD_ENV == {"SKBUILD_BUILD_VERBOSE": "true", "PUFFER_SANITIZE": "OFF"}


def test_the_sanitizer_build_lives_in_the_checkout(tmp_path: Path) -> None:
    source = ocean_source_dir()  # the workspace installs this package editable
    assert (source / "pyproject.toml").is_file() and (source / "csrc").is_dir()
    command = sanitized_build_command(source)
    assert "cmake.define.PUFFER_SANITIZE=ON" in command
    assert str(source / "build" / "sanitize" / "dist") in command
    with pytest.raises(APIUsageError, match=r"make it with `puffer build <env> --debug`"):
        sanitized_module(tmp_path)


def test_the_sanitizer_runtime_comes_first_and_the_callers_options_last() -> None:
    environ = {name: "extra=1" for name in SANITIZER_OPTIONS} | {"LD_PRELOAD": "/lib/other.so"}
    env = sanitized_env("/lib/libasan.so.8", environ)
    assert env["LD_PRELOAD"] == "/lib/libasan.so.8 /lib/other.so"
    for name, options in SANITIZER_OPTIONS.items():
        assert env[name] == f"{options}:extra=1"
        assert environ[name] == "extra=1"  # a copy: the caller's mapping is unchanged
    with pytest.raises(APIUsageError, match="links no libasan"):
        asan_runtime(Path(sys.executable))  # a binary without the ASan runtime


def test_stages_and_steps_are_reported_and_silence_names_the_work(tmp_path: Path) -> None:
    said: list[str] = []
    quiet: list[str] = []
    run_build(_printing(BUILD_OUTPUT, pause=3.0), "x", {}, tmp_path, said.append, quiet.append, 0.2)
    assert said == [
        "  *** scikit-build-core 1.1.2 using CMake 3.25.1 (editable)",
        "  *** Building project with Ninja...",
        "  [1/2] compiling binding.cpp",
        "  [2/2] linking _ocean.cpython-311-x86_64-linux-gnu.so",
    ]
    # While the compiler was silent, the step Ninja named last is what it works on.
    assert quiet and set(quiet) == {"compiling binding.cpp"}


def test_a_failed_build_shows_the_end_of_its_log(tmp_path: Path) -> None:
    said: list[str] = []
    with pytest.raises(APIUsageError, match=r"building x failed \(exit 3\); its log ends above"):
        run_build(_printing(["error: no compiler"], code=3), "x", {}, tmp_path, said.append, print)
    assert said[-1] == "error: no compiler"


def test_docstring_examples() -> None:
    result = doctest.testmod(puffer.ocean.build)
    assert result.attempted > 0 and result.failed == 0
