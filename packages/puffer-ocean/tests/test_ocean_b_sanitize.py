"""AddressSanitizer + UBSan runs of the target, connect4, g2048, tetris and memory headers.

`ocean_b_driver.c` is compiled once per env with the env's spaces taken from its Python class
(so C and Python must agree), then runs 100,000 random steps checking bounds and that every step
writes rewards, terminals and truncations, rendering now and then; its first 20,000 steps are
replayed with the same seed (bit for bit equal) and another seed (different). Any sanitizer
report fails the run.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

import puffer.ocean
from puffer.ocean import OceanEnv

CSRC = Path(__file__).resolve().parents[1] / "csrc"
DRIVER = Path(__file__).with_name("ocean_b_driver.c")
STEPS = 100_000
COMPARED_STEPS = 20_000
ENVS: dict[str, type[OceanEnv]] = {
    "target": puffer.ocean.Target,
    "connect4": puffer.ocean.Connect4,
    "g2048": puffer.ocean.G2048,
    "tetris": puffer.ocean.Tetris,
    "memory": puffer.ocean.Memory,
}
CC = shutil.which("gcc") or shutil.which("cc")


def driver_defines(name: str, env_class: type[OceanEnv]) -> list[str]:
    obs, act = env_class.single_observation_space, env_class.single_action_space
    nvec = [int(act.n)] if isinstance(act, spaces.Discrete) else [int(n) for n in act.nvec]
    return [
        f'-DENV_HEADER="{name}/{name}.h"',
        f"-DENV_TYPE={env_class.__name__}",
        f"-DOBS_SIZE={int(np.prod(obs.shape))}",
        f"-DOBS_LOW={float(obs.low.min())!r}",
        f"-DOBS_HIGH={float(obs.high.max())!r}",
        f"-DACT_SIZE={len(nvec)}",
        "-DACT_NVEC={" + ",".join(map(str, nvec)) + "}",
    ]


@pytest.mark.skipif(CC is None, reason="no C compiler on PATH")
@pytest.mark.parametrize("name", ENVS)
def test_ocean_b_sanitized_random_steps(name: str, tmp_path: Path) -> None:
    binary = tmp_path / name
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-O1", "-fno-omit-frame-pointer"]
    sanitize = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
    sources = [f"-I{CSRC}", *driver_defines(name, ENVS[name]), str(DRIVER)]
    build = subprocess.run(
        [CC, *flags, *sanitize, *sources, "-o", str(binary), "-lm"],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run(
        [str(binary), str(STEPS), str(COMPARED_STEPS)],
        capture_output=True,
        text=True,
        env={
            "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
            "UBSAN_OPTIONS": "print_stacktrace=1",
        },
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"ok steps={STEPS} "), run.stdout
    assert "runtime error" not in run.stderr and "Sanitizer" not in run.stderr, run.stderr
