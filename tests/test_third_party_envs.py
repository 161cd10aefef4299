"""`puffer train` on envs that puffer knows only through Gymnasium and PettingZoo: MiniGrid in
Gymnasium's own `module:EnvId` form, and `corridor_envs` (tests/third_party), an installed
package that is none of puffer's families and registers its ids only when imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from puffer.train.metrics import read_jsonl
from puffer.train.paths import RunPaths

# A dozen `puffer train` subprocesses, a minute on 2 cores: scheduled with the slow modules.
pytestmark = pytest.mark.slow

THIRD_PARTY = Path(__file__).resolve().parent / "third_party"
_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]
SHORT = ["--no-dashboard", "--train.device", "cpu", "--train.total-timesteps"]


def train(env: str, steps: int, data_dir: Path) -> subprocess.CompletedProcess:
    """`puffer train env` with `corridor_envs` installed (its folder on the path)."""
    path = os.pathsep.join(filter(None, [str(THIRD_PARTY), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [*PUFFER, "train", env, *SHORT, str(steps), "--train.data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return done


def run_rows(data_dir: Path, env: str) -> list[dict]:
    (metrics,) = RunPaths.env_dir(data_dir, env).glob(f"*/{RunPaths.METRICS}")
    return read_jsonl(metrics)


@pytest.mark.parametrize(
    ("env", "steps"),
    [
        ("gym-minigrid:MiniGrid-DoorKey-6x6-v0", 4096),
        ("gym-Corridor-v0", 4096),  # found by the package's name
        ("gym-LongHall-v0", 4096),  # found by importing each Gymnasium package in turn
        ("pettingzoo-corridor_envs.duel", 2048),
        ("pettingzoo-corridor_envs.duel:parallel_env", 2048),
    ],
)
def test_puffer_trains_envs_of_other_packages(env: str, steps: int, tmp_path: Path) -> None:
    done = train(env, steps, tmp_path)
    assert f"done: {steps:,} steps" in done.stdout
    rows = run_rows(tmp_path, env)
    assert rows[-1]["step"] == steps
    # Episodes finished and were logged (the env's own return and length).
    assert any(row.get("environment/episode_length") for row in rows)
