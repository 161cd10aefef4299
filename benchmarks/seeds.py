"""Learning runs of one env over several seeds, side by side, each a `puffer train` process.

The acceptance runs of the env families (Atari Pong >= +15 within 10M frames,
MinAtar, DoorKey, Crafter, NetHack, pistonball) as one command. Every seed trains with the
env's shipped TOML plus the arguments after `--`, keeping the TOML's step budget, so its
learning-rate schedule is the shipped one; a run is stopped (SIGTERM: `puffer train` finishes
the iteration and writes its checkpoint) once it passes `--steps` or when `--minutes` run out.
Every `--report` seconds it prints one line per seed; at the end, per seed: steps and frames
reached, wall time, steps/s, the mean of `--metric` over the episodes that the last `--window`
logged iterations finished, and the first step at which that windowed mean reached `--target`.
`--stop-at-target` stops a run there. `--resume` continues the runs in `--data-dir` from their
checkpoints (same arguments after `--`), so one measurement can span several sittings: the
metrics, the first step at the target and the wall time then count from each run's start.

    uv run python benchmarks/seeds.py minatar-breakout --seeds 0 1 2 --steps 1000000
    uv run python benchmarks/seeds.py atari-pong --seeds 0 --steps 2500000 --target 15 \\
        --stop-at-target --minutes 100 --data-dir pong   # then the same with --resume
    python benchmarks/seeds.py atari-pong --seeds 0 1 2 --steps 2500000 --target 15 \\
        --minutes 9 --json pong.json -- --train.device cuda --env.num-envs 32 \\
        --env.num-threads 4 --train.horizon 32 --train.minibatch-size 256

Frames are agent steps times the env's frame skip (`env.frameskip`; 4 for `atari-*` unless
set). Runs land under `--data-dir` (a fresh temporary folder by default), one run id per seed,
each with its `train.log`. Each run's automatic torch thread count is its share of the cores
(as `puffer sweep` gives its parallel runs); env threads are the env's own setting (an Atari
run's `env.num_threads` 0 is one per core), so pass a share of them too.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path

from puffer.cli.bench import header, machine, record
from puffer.core import slot_env
from puffer.train.metrics import read_jsonl
from puffer.train.paths import RunPaths

EPISODES = "performance/episodes"
STEP = "performance/global_step"
WALL = "seeds.json"  # in each run's folder: its wall time over every sitting so far


@dataclass
class Progress:
    """What one run's metrics say so far."""

    steps: int = 0
    sps: float = 0.0
    window_mean: float | None = None  # the metric over the last `window` iterations' episodes
    first_reached: int | None = None  # the first step where that mean reached the target


def read_progress(metrics: Path, metric: str, window: int, target: float | None) -> Progress:
    """What a run's metrics.jsonl says so far (complete rows only: the run may be writing one).

    The windowed mean weights each epoch's mean by the episodes it finished
    (`performance/episodes`), so it is the mean over those episodes, not over iterations.
    """
    progress = Progress()
    if not metrics.exists():
        return progress
    key = f"environment/{metric}"
    recent: deque[tuple[float, float]] = deque(maxlen=window)  # (iteration mean, episodes)
    for row in read_jsonl(metrics):
        progress.steps = int(row.get(STEP, row.get("step", progress.steps)))
        progress.sps = row.get("performance/sps", progress.sps)
        if key not in row:
            continue
        recent.append((row[key], max(row.get(EPISODES, 1.0), 1.0)))
        progress.window_mean = sum(m * n for m, n in recent) / sum(n for _, n in recent)
        full = len(recent) == window
        if target is not None and progress.first_reached is None and full:
            if progress.window_mean >= target:
                progress.first_reached = progress.steps
    return progress


def frame_skip(env: str, config_json: Path) -> int:
    """Emulator frames per agent step: the run's `env.frameskip`, else `AtariEnv`'s default
    for `atari-*` envs, else 1."""
    if config_json.exists():
        skip = json.loads(config_json.read_text()).get("env", {}).get("frameskip")
        if skip is not None:
            return int(skip)
    if env.startswith("atari-"):
        from puffer.envs.atari import AtariEnv  # ale-py itself is imported only on construction

        return inspect.signature(AtariEnv).parameters["frameskip"].default
    return 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env", help="registered env name, e.g. atari-pong")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, help="stop each run past this many agent steps")
    parser.add_argument("--minutes", type=float, help="stop every run after this wall time")
    parser.add_argument("--metric", default="episode_return", help="episode stat to follow")
    parser.add_argument("--target", type=float, help="report the first step the mean reaches")
    parser.add_argument("--window", type=int, default=20, help="logged iterations in the mean")
    parser.add_argument("--report", type=float, default=60.0, help="seconds between reports")
    parser.add_argument("--data-dir", help="where the runs go (default: a temporary folder)")
    parser.add_argument("--json", help="also write the summary to this file")
    parser.add_argument(
        "--stop-at-target", action="store_true", help="stop a run once its mean reaches --target"
    )
    parser.add_argument(
        "--resume", action="store_true", help="continue the runs in --data-dir from checkpoints"
    )
    args, extra = parser.parse_known_args()
    if args.window < 1:
        parser.error(f"--window is {args.window}; the mean needs at least 1 epoch")
    if args.stop_at_target and args.target is None:
        parser.error("--stop-at-target needs --target")
    if args.resume and args.data_dir is None:
        parser.error("--resume needs --data-dir, the folder of the runs to continue")
    extra = [a for a in extra if a != "--"]
    data_dir = Path(args.data_dir or tempfile.mkdtemp(prefix="puffer-seeds-"))
    print(header("torch"), flush=True)
    print(f"{args.env}: seeds {args.seeds}, runs under {data_dir}", flush=True)

    run_paths = {seed: RunPaths(data_dir, args.env, f"seed{seed}") for seed in args.seeds}
    earlier_wall: dict[int, float] = {}  # seconds the resumed runs ran in earlier sittings
    for seed, paths in run_paths.items():
        if paths.checkpoint.is_file():
            if not args.resume:
                parser.error(
                    f"{paths.checkpoint} exists; pass --resume to continue that run, "
                    "or choose another --data-dir"
                )
            wall = paths.root / WALL
            earlier_wall[seed] = json.loads(wall.read_text())["wall_s"] if wall.exists() else 0.0
            steps = read_progress(paths.metrics, args.metric, 1, None).steps
            print(f"seed {seed}: resuming at {steps:,} steps", flush=True)

    start = time.monotonic()
    runs: dict[int, tuple[subprocess.Popen, RunPaths, Path]] = {}
    for seed, paths in run_paths.items():
        paths.root.mkdir(parents=True, exist_ok=True)
        log = paths.root / "train.log"
        resume = ["--train.resume", "true"] if seed in earlier_wall else []
        command = [
            sys.executable,
            "-m",
            "puffer.cli",
            "train",
            args.env,
            "--no-dashboard",
            "--train.seed",
            str(seed),
            "--train.data-dir",
            str(data_dir),
            "--train.run-id",
            paths.run_id,
            *resume,
            *extra,
        ]
        with log.open("a" if resume else "w") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **slot_env(len(args.seeds))},
            )
        runs[seed] = (process, paths, log)

    stopping: set[int] = set()
    ended: dict[int, float] = {}  # when each run was seen to have exited (its own wall time)
    last_report = start
    try:
        while any(process.poll() is None for process, _, _ in runs.values()):
            time.sleep(2.0)
            now = time.monotonic()
            late = args.minutes is not None and now - start > args.minutes * 60
            progress = {
                seed: read_progress(paths.metrics, args.metric, args.window, args.target)
                for seed, (_, paths, _) in runs.items()
            }
            for seed, (process, _, _) in runs.items():
                if process.poll() is not None:
                    ended.setdefault(seed, now)
                    continue
                if seed in stopping:
                    continue
                p = progress[seed]
                reached = args.stop_at_target and p.first_reached is not None
                if late or reached or (args.steps is not None and p.steps >= args.steps):
                    process.send_signal(signal.SIGTERM)
                    stopping.add(seed)
            if now - last_report >= args.report:
                last_report = now
                for seed, p in progress.items():
                    mean = "-" if p.window_mean is None else f"{p.window_mean:.2f}"
                    print(
                        f"{(now - start) / 60:6.1f} min seed {seed}: {p.steps:,} steps, "
                        f"{p.sps:,.0f} steps/s, {args.metric} {mean}",
                        flush=True,
                    )
    finally:
        for process, _, _ in runs.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _, _ in runs.values():
            try:
                process.wait(timeout=300)
            except subprocess.TimeoutExpired:
                process.kill()

    wall = time.monotonic() - start
    summary = []
    for seed, (process, paths, log) in runs.items():
        p = read_progress(paths.metrics, args.metric, args.window, args.target)
        skip = frame_skip(args.env, paths.config)
        seed_wall = earlier_wall.get(seed, 0.0) + ended.get(seed, start + wall) - start
        (paths.root / WALL).write_text(json.dumps({"wall_s": seed_wall}))
        row = {"seed": seed, "frames": p.steps * skip, "wall_s": round(seed_wall, 1), **asdict(p)}
        row["exit_code"] = process.returncode
        summary.append(row)
        reached = (
            ""
            if args.target is None
            else "; never reached"
            if p.first_reached is None
            else f"; reached {args.target:g} at {p.first_reached:,} steps "
            f"({p.first_reached * skip:,} frames)"
        )
        mean = "-" if p.window_mean is None else f"{p.window_mean:.2f}"
        # 0: the TOML's budget ran out first; 128 + SIGTERM: stopped here, checkpoint written.
        failed = "" if process.returncode in (0, 128 + signal.SIGTERM) else " FAILED"
        print(
            f"seed {seed}{failed}: {p.steps:,} steps ({p.steps * skip:,} frames), "
            f"{p.sps:,.0f} steps/s, {args.metric} over the last {args.window} iterations "
            f"{mean}{reached}; {seed_wall / 60:.1f} min in all; exit code {process.returncode}, "
            f"log {log}"
        )
    print(f"wall time {wall / 60:.1f} min for {len(runs)} seeds side by side on {machine()}")
    if args.json:
        result = record("seeds", env=args.env, runs=summary)
        Path(args.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
