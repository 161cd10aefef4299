"""benchmarks/seeds.py: side-by-side seed runs through `puffer train`, stopped and summarized."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "seeds.py"


def _write_epochs(
    path: Path, epochs: list[tuple[int, float | None, float]], tail: str = ""
) -> None:
    rows = []
    for step, value, episodes in epochs:
        row = {"step": step, "performance/global_step": float(step), "performance/sps": 100.0}
        row["performance/episodes"] = episodes
        if value is not None:
            row["environment/episode_return"] = value
        rows.append(json.dumps(row) + "\n")
    path.write_text("".join(rows) + tail)


def test_the_window_mean_is_over_episodes_and_the_first_reach_needs_a_full_window(
    tmp_path: Path, benchmark_script
) -> None:
    seeds = benchmark_script("seeds")
    metrics = tmp_path / "metrics.jsonl"
    # Epoch means 10 (1 episode), 20 (3 episodes), none (no episode ended), 16 (1 episode).
    _write_epochs(metrics, [(100, 10.0, 1), (200, 20.0, 3), (300, None, 0), (400, 16.0, 1)])
    progress = seeds.read_progress(metrics, "episode_return", 2, 17.0)
    assert progress.steps == 400
    assert progress.window_mean == pytest.approx((20.0 * 3 + 16.0) / 4)
    # After epoch 200 the window (10, 20x3) held 17.5 >= 17 over two epochs: reached there.
    assert progress.first_reached == 200
    # With a window of 3 epochs the mean first fills at step 400, at 86/5 = 17.2.
    assert seeds.read_progress(metrics, "episode_return", 3, 17.0).first_reached == 400
    assert seeds.read_progress(metrics, "episode_return", 3, 18.0).first_reached is None


def test_a_line_still_being_written_is_not_read(tmp_path: Path, benchmark_script) -> None:
    seeds = benchmark_script("seeds")
    metrics = tmp_path / "metrics.jsonl"
    _write_epochs(metrics, [(100, 5.0, 2)], tail='{"step": 200, "performance/glob')
    progress = seeds.read_progress(metrics, "episode_return", 20, None)
    assert progress.steps == 100 and progress.window_mean == 5.0
    missing = seeds.read_progress(tmp_path / "none.jsonl", "episode_return", 20, None)
    assert missing.steps == 0 and missing.window_mean is None


def test_frames_count_the_frame_skip(tmp_path: Path, benchmark_script) -> None:
    seeds = benchmark_script("seeds")
    config = tmp_path / "config.json"
    assert seeds.frame_skip("atari-pong", config) == 4  # no config yet: ale's default
    assert seeds.frame_skip("cartpole", config) == 1
    config.write_text(json.dumps({"env": {"frameskip": 3}}))
    assert seeds.frame_skip("atari-pong", config) == 3


@pytest.mark.slow
def test_two_seeds_train_side_by_side_and_stop_at_the_step_budget(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "cartpole",
            "--seeds",
            "0",
            "1",
            "--steps",
            "4000",
            "--window",
            "2",
            "--data-dir",
            str(tmp_path / "runs"),
            "--json",
            str(summary),
            "--",
            "--env.num-envs",
            "8",
        ],
        check=True,
        timeout=300,
    )
    result = json.loads(summary.read_text())
    assert result["benchmark"] == "seeds" and result["env"] == "cartpole"
    runs = result["runs"]
    assert [run["seed"] for run in runs] == [0, 1]
    for run in runs:
        # Stopped by SIGTERM past the budget (the TOML's own budget is far larger), with its
        # checkpoint written; or, on a fast machine, the run ended between two polls.
        assert run["steps"] >= 4000 and run["frames"] == run["steps"]
        assert run["exit_code"] in (0, 128 + 15)
        assert math.isfinite(run["window_mean"])
        root = tmp_path / "runs" / "cartpole" / f"seed{run['seed']}"
        assert (root / "checkpoint.pt").exists() and (root / "train.log").exists()


def _run_seeds(tmp_path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), "cartpole", "--seeds", "0", "--window", "2"]
    command += ["--data-dir", str(tmp_path / "runs"), "--json", str(tmp_path / "summary.json")]
    command += [*args, "--", "--env.num-envs", "8"]
    return subprocess.run(command, check=check, timeout=300, capture_output=True, text=True)


@pytest.mark.slow
def test_a_run_stops_at_its_target_and_a_later_sitting_resumes_it(tmp_path: Path) -> None:
    # Every cartpole episode returns more than 0, so the mean reaches 0 once 2 epochs are in.
    _run_seeds(tmp_path, "--steps", "1000000", "--target", "0", "--stop-at-target")
    first = json.loads((tmp_path / "summary.json").read_text())["runs"][0]
    assert first["exit_code"] == 128 + 15 and first["first_reached"] is not None
    assert first["steps"] < 1_000_000

    again = _run_seeds(tmp_path, "--steps", "1000", check=False)
    assert again.returncode == 2 and "pass --resume" in again.stderr

    budget = first["steps"] + 2000
    resumed = _run_seeds(tmp_path, "--steps", str(budget), "--target", "0", "--resume")
    assert f"resuming at {first['steps']:,} steps" in resumed.stdout
    second = json.loads((tmp_path / "summary.json").read_text())["runs"][0]
    assert second["steps"] >= budget and second["exit_code"] in (0, 128 + 15)
    assert second["first_reached"] == first["first_reached"]  # read from the whole history
    assert second["wall_s"] > first["wall_s"]  # both sittings count
    metrics = (tmp_path / "runs/cartpole/seed0/metrics.jsonl").read_text().splitlines()
    steps = [json.loads(line)["step"] for line in metrics]
    assert steps == sorted(set(steps))  # the resumed run appended, with no epoch logged twice
