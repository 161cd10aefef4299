"""Sanitizer runs: ASan + UBSan over every C env header the binding registers, and
ThreadSanitizer over the step pool (csrc/pool.h).

`ocean_harness.c` is compiled per env with `gcc -fsanitize=address,undefined` (leak checks on)
and only `-DENV_HEADER`: config defaults, agents, action space, observation bounds and the state
layout all come from the header's SPEC, so a new env is covered as soon as csrc/envs.h lists it.
It runs 100,000 random steps checking rewards, flags and observation bounds every step, reruns
the first 20,000 with the same seed (bit for bit) and another (different), and repeats 20,000
steps after a save/load of the C state (bit for bit); any sanitizer report fails the test. This
is the debug build without Python in the way (test_ocean_sanitize_extension.py
runs the sanitized extension itself).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from puffer.ocean import _ocean
from puffer.ocean.env import header_path

# Compiles and runs a sanitized harness per env: minutes on 2 cores, so scheduled first.
pytestmark = pytest.mark.slow

CSRC = Path(__file__).resolve().parents[1] / "csrc"
HARNESS = Path(__file__).with_name("ocean_harness.c")
STEPS = 100_000
# Envs whose default config steps a thousand agents at once: fewer env steps, still millions of
# agent steps (convert: 1,024 agents, so 5,000 steps are 5.1M agent steps; terraform: 8 dozers
# on a 64x64 map, 25,000 steps are 200,000 dozer steps and 3 episodes; school: 512 units whose
# attack scan tests every pair of enemies, 400 steps are 204,800 unit steps; tower_climb: 64
# climbers, 10,000 steps are 640,000 climber steps and 10,000+ episodes).
STEPS_FOR = {"convert": 5_000, "terraform": 25_000, "school": 400, "tower_climb": 10_000}
CC = shutil.which("gcc") or shutil.which("cc")


def build_harness(name: str, binary: Path) -> None:
    """Compile the harness for env `name` under ASan + UBSan into `binary`."""
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1", "-fno-omit-frame-pointer"]
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    header = header_path(_ocean.SPECS[name])
    sources = [f"-I{CSRC}", f'-DENV_HEADER="{header}"', str(HARNESS)]
    build = subprocess.run(
        [CC, *flags, *sanitize, *sources, "-o", str(binary), "-lm"],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr


def run_harness(binary: Path, steps: int = STEPS, seed: int = 7) -> str:
    """Run a built harness; returns its stdout after asserting a clean, sanitizer-quiet run."""
    run = subprocess.run(
        [str(binary), str(steps), str(seed)],
        capture_output=True,
        text=True,
        env={"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1"},
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"ok steps={steps} "), run.stdout
    assert "runtime error" not in run.stderr and "Sanitizer" not in run.stderr, run.stderr
    return run.stdout


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
@pytest.mark.parametrize("name", _ocean.ENVS)
def test_ocean_sanitized_random_steps(name: str, tmp_path: Path) -> None:
    binary = tmp_path / name
    build_harness(name, binary)
    steps = STEPS_FOR.get(name, STEPS)
    episodes = float(run_harness(binary, steps).split("episodes=")[1])
    assert episodes > 0, f"{name}: no episode ended in {steps} random steps"


CXX = shutil.which("g++") or shutil.which("c++")


@pytest.mark.skipif(CXX is None, reason="no C++ compiler on PATH")
def test_ocean_step_pool_under_thread_sanitizer(tmp_path: Path) -> None:
    binary = tmp_path / "pool"
    flags = ["-std=c++17", "-O1", "-g", "-fsanitize=thread", f"-I{CSRC}", "-pthread"]
    build = subprocess.run(
        [CXX, *flags, str(HARNESS.with_name("pool_driver.cpp")), "-o", str(binary)],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(binary), "2000"], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0 and run.stdout == "ok\n", run.stdout + run.stderr
    assert "ThreadSanitizer" not in run.stderr, run.stderr
