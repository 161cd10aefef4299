"""Sanitizer runs: ASan + UBSan over the squared, cartpole, pong, breakout and snake headers,
and ThreadSanitizer over the step pool (csrc/pool.h).

`ocean_driver.c` is compiled per env with `gcc -fsanitize=address,undefined` (leak checks on),
with the config and spaces of the env's Python class, and runs 100,000 random steps checking the
observation bounds every step; any sanitizer report fails the test. This is the debug build of
DESIGN.md §5 without Python in the way (an ASan extension would need libasan preloaded).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

import puffer.ocean
from puffer.ocean import OceanEnv

CSRC = Path(__file__).resolve().parents[1] / "csrc"
DRIVER = Path(__file__).with_name("ocean_driver.c")
STEPS = 100_000
CC = shutil.which("gcc") or shutil.which("cc")
# name: (header, C struct, Python class, extra defines)
ENVS: dict[str, tuple[str, str, type[OceanEnv], list[str]]] = {
    "squared": ("squared/squared.h", "Squared", puffer.ocean.Squared, []),
    "cartpole": ("cartpole/cartpole.h", "Cartpole", puffer.ocean.Cartpole, []),
    "cartpole_continuous": (
        "cartpole/cartpole.h",
        "Cartpole",
        puffer.ocean.CartpoleContinuous,
        ["-DCARTPOLE_CONTINUOUS"],
    ),
    "pong": ("pong/pong.h", "Pong", puffer.ocean.Pong, []),
    "breakout": ("breakout/breakout.h", "Breakout", puffer.ocean.Breakout, []),
    "snake": ("snake/snake.h", "Snake", puffer.ocean.Snake, []),
}


def c_float(value: float) -> str:
    return repr(value) if np.isfinite(value) else ("INFINITY" if value > 0 else "-INFINITY")


def defines(header: str, struct: str, env_class: type[OceanEnv]) -> list[str]:
    """The driver's -D flags: header, spaces and default config of `env_class`."""
    obs, act = env_class.single_observation_space, env_class.single_action_space
    config = dataclasses.asdict(env_class.config_class())
    return [
        f'-DENV_HEADER="{header}"',
        f"-DENV_TYPE={struct}",
        f"-DOBS_SIZE={int(np.prod(obs.shape))}",
        f"-DOBS_LOW={c_float(float(obs.low.min()))}",
        f"-DOBS_HIGH={c_float(float(obs.high.max()))}",
        f"-DACTIONS={int(act.n) if isinstance(act, spaces.Discrete) else 0}",
        "-DSET_CONFIG(env)=" + "".join(f"env->{k}={v!r};" for k, v in config.items()),
    ]


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
@pytest.mark.parametrize("name", ENVS)
def test_ocean_sanitized_random_steps(name: str, tmp_path: Path) -> None:
    header, struct, env_class, extra = ENVS[name]
    binary = tmp_path / name
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1", "-fno-omit-frame-pointer"]
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    sources = [f"-I{CSRC}", *defines(header, struct, env_class), *extra, str(DRIVER)]
    build = subprocess.run(
        [CC, *flags, *sanitize, *sources, "-o", str(binary), "-lm"],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run(
        [str(binary), str(STEPS), "7"],
        capture_output=True,
        text=True,
        env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1"},
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"ok steps={STEPS} "), run.stdout
    assert "runtime error" not in run.stderr and "Sanitizer" not in run.stderr, run.stderr
    episodes = float(run.stdout.split("episodes=")[1])
    assert episodes > 0, f"{name}: no episode ended in {STEPS} random steps"


CXX = shutil.which("g++") or shutil.which("c++")


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_ocean_step_pool_under_thread_sanitizer(tmp_path: Path) -> None:
    binary = tmp_path / "pool"
    flags = ["-std=c++17", "-O1", "-g", "-fsanitize=thread", f"-I{CSRC}", "-pthread"]
    build = subprocess.run(
        [CXX, *flags, str(DRIVER.with_name("pool_driver.cpp")), "-o", str(binary)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary), "2000"], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0 and run.stdout == "ok\n", run.stdout + run.stderr
    assert "ThreadSanitizer" not in run.stderr, run.stderr
