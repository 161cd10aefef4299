"""Ocean learning beside PufferLib 3.0: its trainer at its shipped config, ours at that same
config, and ours at our shipped TOML, each to the end of PufferLib's budget.

Rows per env and seed:
- `pufferlib`: PufferLib 3.0's `pufferl.train("puffer_ENV")` with its shipped `.ini`, its env
  and vec counts as shipped (`--vec.backend Serial`: its Multiprocessing backend asks for more
  workers than 2 cores have; Serial steps the same env objects in one process);
- `same`: `puffer train ENV` with every value of that `.ini` (`peers.ours_from_pufferlib`);
- `shipped`: `puffer train ENV` with our TOML as shipped, its budget cut to PufferLib's where
  it is longer (cartpole's TOML trains 99,840 steps in 256-step batches: a recipe for that
  budget, not for PufferLib's 20M).

`--device cuda` runs every row on the GPU: PufferLib's trainer then keeps its shipped vec backend
and worker count too (Multiprocessing, one process per env object), as its `puffer train
puffer_ENV --train.device cuda` does.

Each run writes its curve (steps, score, wall time) to `--out/ENV/ROW/seedS.jsonl` and is
skipped when that file already holds a finished run, so a long table fills over several
sittings (a PufferLib run appends each iteration to `seedS.partial` while it runs, so a cut-off
run still shows how far it got); `--report` prints the table from the stored curves only, and
`--write` also puts it into docs/results/ocean.md (between its `ocean_learn` markers). The
table gives the score (the env's `score` log, the last logged window at or before the point)
at 25 %, 50 % and 100 % of the budget, the median steps/s of the run's iterations, and its wall
time.

    uv run python benchmarks/ocean_learn.py breakout pong --seeds 0 1 2 --pufferlib /work/pl3 \\
        --out /work/notes/learn
    uv run python benchmarks/ocean_learn.py breakout pong --seeds 0 1 2 --pufferlib /work/pl3 \\
        --out /work/notes/learn --report --write
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from peers import ours_from_pufferlib, pufferlib_config, pufferlib_python
from results_page import PAGES, write_table

from puffer.cli.bench import header, record

PAGE = PAGES / "ocean.md"  # its table sits between the `ocean_learn` markers there
ROWS = ("pufferlib", "same", "shipped")
# Loss statistics kept beside each curve's score, to compare how the two trainers' updates move.
LOSSES = ("entropy", "approx_kl", "clipfrac", "value_loss", "explained_variance")

# Run by PufferLib's interpreter from a scratch folder (its import writes ./resources): its
# `train` with its config, one JSON line per logged iteration on stdout. The dashboard is silenced;
# the process ends with training: its final evaluation (32 more iterations; 5 minutes of cartpole's
# on 2 cores) is not part of the curve. Its Serial
# backend builds only `vec.batch_size` env objects, and its "auto" batch is half of
# `vec.num_envs`: the batch size is passed as every env object, so all its agents run (without
# it, breakout ran 4,096 agents in 262,144-step batches, not its config's 8,192 and 524,288).
# On CUDA its shipped vec backend runs as configured (objects is then 0).
PUFFERLIB_SCRIPT = (
    f"LOSSES = {LOSSES!r}\n"
    + """
import json, os, sys, time, torch
env, seed, threads, steps, objects, device = sys.argv[1:7]
torch.set_num_threads(int(threads))
sys.argv = ["puffer", "--train.device", device, "--train.seed", seed,
            "--train.total-timesteps", steps]
if objects != "0":
    sys.argv += ["--vec.backend", "Serial", "--vec.num-envs", objects, "--vec.batch-size", objects]
from pufferlib import pufferl
pufferl.PuffeRL.print_dashboard = lambda self, *a, **k: None
start, log = time.time(), pufferl.PuffeRL.mean_and_log
def mean_and_log(self):
    logs = log(self)
    if logs and self.global_step <= self.config["total_timesteps"] + self.config["batch_size"]:
        row = {"step": int(logs["agent_steps"]), "sps": float(logs["SPS"]),
               "wall": time.time() - start}
        if "environment/score" in logs:
            row["score"] = float(logs["environment/score"])
        # Its logs carry the losses of the iteration before (it stores them after logging).
        row.update({k: float(logs["losses/" + k]) for k in LOSSES if "losses/" + k in logs})
        print("ROW " + json.dumps(row), flush=True)
        if self.global_step >= self.config["total_timesteps"]:
            os._exit(0)  # trained: its final evaluation (32 more iterations) is no part of the curve
    return logs
pufferl.PuffeRL.mean_and_log = mean_and_log
pufferl.train(env)
"""
)


def die_with_parent() -> None:
    """A trainer's `preexec_fn`: on Linux the child gets SIGTERM when this process dies
    (`PR_SET_PDEATHSIG`), so a driver killed mid-run leaves no trainer running on its cores."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def run_pufferlib(
    python: Path,
    env: str,
    seed: int,
    threads: int,
    steps: int,
    objects: int,
    partial: Path,
    device: str = "cpu",
    stop_at: int | None = None,
) -> list[dict]:
    """PufferLib's `train` of `puffer_ENV` at its config on `device`: with `objects` env objects
    (its `vec.num_envs`) all stepped each batch in one process, or with `objects` 0 its shipped
    vec backend as configured. Each logged iteration is appended to `partial` as it
    comes (a cut-off run keeps its curve so far) and every tenth of the budget is reported.
    With `stop_at`, the trainer is stopped once it has logged that many steps: its schedule is
    still the whole budget's, so every point up to there is the whole run's."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, open(Path(scratch) / "stderr", "w+") as err:
        with subprocess.Popen(
            [str(python), "-c", PUFFERLIB_SCRIPT, f"puffer_{env}", str(seed), str(threads),
             str(steps), str(objects), device],
            cwd=scratch, env={**os.environ, "OMP_NUM_THREADS": str(threads)},
            stdout=subprocess.PIPE, stderr=err, text=True, preexec_fn=die_with_parent,
        ) as child:  # fmt: skip
            rows = stream_rows(child, partial, f"pufferlib {env} seed {seed}", steps, stop_at)
        err.seek(0)
        stopped = stop_at is not None and bool(rows) and rows[-1]["step"] >= stop_at
        if (child.returncode != 0 and not stopped) or not rows:
            raise SystemExit(f"PufferLib's trainer failed on {env}:\n{err.read()[-3000:]}")
    return rows


def stream_rows(
    child: subprocess.Popen, partial: Path, name: str, steps: int, stop_at: int | None = None
) -> list[dict]:
    """The `ROW {json}` lines `child` prints, each appended to `partial` as it comes, every
    tenth of `steps` reported under `name`; with `stop_at`, `child` is terminated at the first
    row at or past that step (its rows so far returned)."""
    rows: list[dict] = []
    with open(partial, "w") as log:
        for line in child.stdout:
            if not line.startswith("ROW "):
                continue
            rows.append(json.loads(line[4:]))
            log.write(line[4:])
            log.flush()
            tenths = [row["step"] * 10 // steps for row in rows[-2:]]
            if len(rows) == 1 or tenths[1] > tenths[0]:
                print(f"  {name}: {rows[-1]}", flush=True)
            if stop_at is not None and rows[-1]["step"] >= stop_at:
                print(f"  {name}: stopped at {rows[-1]['step']} of {steps} steps", flush=True)
                child.terminate()
                break
    return rows


def pufferlib_row(
    python: Path,
    env: str,
    seed: int,
    threads: int,
    config: dict[str, dict[str, object]],
    path: Path,
    device: str = "cpu",
    stop_at: int | None = None,
) -> list[dict]:
    """PufferLib's trainer on `env` at `config` (`pufferlib_config`, its budget
    `train.total_timesteps`), every env object it configures (`vec.num_envs`) on the CPU, its
    shipped vec backend on CUDA; its iterations stream to `path`'s `.partial` twin while it runs
    (removed once it ends); `stop_at` as `run_pufferlib`'s."""
    objects = 0 if device == "cuda" else int(config.get("vec", {}).get("num_envs", 1))
    partial = path.with_suffix(".partial")
    steps = int(config["train"]["total_timesteps"])
    curve = run_pufferlib(python, env, seed, threads, steps, objects, partial, device, stop_at)
    partial.unlink()
    return curve


def run_ours(
    env: str, seed: int, threads: int, flags: list[str], device: str = "cpu"
) -> list[dict]:
    """`puffer train ENV FLAGS` on `device` in a fresh process; its metrics rows as curve
    rows."""
    with tempfile.TemporaryDirectory() as data_dir:
        start = time.time()
        done = subprocess.run(
            [sys.executable, "-m", "puffer.cli", "train", env, "--no-dashboard", *flags,
             "--train.seed", str(seed), "--train.torch-threads", str(threads),
             "--train.data-dir", data_dir, "--train.device", device],
            capture_output=True, text=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        wall = time.time() - start
        if done.returncode != 0:
            raise SystemExit(f"puffer train {env} failed:\n{done.stdout[-2000:]}{done.stderr}")
        (metrics,) = Path(data_dir).glob(f"{env}/*/metrics.jsonl")
        rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    curve = []
    for row in rows:
        point = {"step": int(row["step"]), "sps": row["performance/sps"]}
        if "environment/score" in row:
            point["score"] = row["environment/score"]
        point.update({k: row["losses/" + k] for k in LOSSES if "losses/" + k in row})
        curve.append(point)
    curve[-1]["wall"] = wall
    return curve


def shipped_budget(env: str) -> int:
    """`train.total_timesteps` of ENV's shipped TOML (`puffer config ENV`)."""
    done = subprocess.run([sys.executable, "-m", "puffer.cli", "config", env],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(tomllib.loads(done.stdout)["train"]["total_timesteps"])


def run(args: argparse.Namespace, python: Path, env: str, row: str, seed: int) -> Path:
    """Run one (env, row, seed) unless its curve is stored; returns the curve's path."""
    path = Path(args.out) / env / row / f"seed{seed}.jsonl"
    if path.exists():
        return path
    config = pufferlib_config(python, env)
    if args.budget is not None:
        config["train"]["total_timesteps"] = args.budget
    steps = int(config["train"]["total_timesteps"])
    if row == "pufferlib":
        curve = pufferlib_row(python, env, seed, args.threads, config, path, args.device)
    elif row == "same":
        curve = run_ours(env, seed, args.threads, ours_from_pufferlib(config), args.device)
    else:
        steps = min(steps, shipped_budget(env))
        flags = ["--train.total-timesteps", str(steps)]
        curve = run_ours(env, seed, args.threads, flags, args.device)
    meta = record(
        "ocean_learn",
        env=env,
        row=row,
        seed=seed,
        budget=steps,
        threads=args.threads,
        device=args.device,
    )
    name_the_gpu(meta, args.device)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(json.dumps(x) for x in [meta, *curve]) + "\n")
    tmp.replace(path)
    return path


def name_the_gpu(meta: dict, device: str) -> None:
    """Put the GPU's name after a curve's machine when it ran on `device` 'cuda'."""
    if device == "cuda":
        import torch

        meta["machine"] += f", {torch.cuda.get_device_name(0)}"


def score_at(curve: list[dict], step: float) -> float | None:
    """The last logged score at or before `step` (None before any)."""
    scores = [point["score"] for point in curve if "score" in point and point["step"] <= step]
    return scores[-1] if scores else None


def seconds_to(curve: list[dict], score: float) -> float | None:
    """Training seconds until the logged score first reaches `score` (None if it never does):
    PufferLib's rows log the wall time at each point; ours count each iteration's steps at its
    steps/s (training only, without start-up)."""
    logs_wall = all("wall" in point for point in curve)
    elapsed, last_step = 0.0, 0
    for point in curve:
        elapsed += (point["step"] - last_step) / point["sps"]
        last_step = point["step"]
        if point.get("score", float("-inf")) >= score:
            return point["wall"] if logs_wall else elapsed
    return None


def load(path: Path) -> tuple[dict, list[dict]]:
    meta, *curve = (json.loads(line) for line in path.read_text().splitlines())
    return meta, curve


def summary(path: Path) -> dict:
    meta, curve = load(path)
    budget = meta["budget"]
    end = curve[-1]["step"]
    walls = [point["wall"] for point in curve if "wall" in point]
    return {
        **meta,
        "scores": [score_at(curve, fraction * budget) for fraction in (0.25, 0.5)]
        + [score_at(curve, end)],
        "sps": statistics.median(point["sps"] for point in curve),
        "wall": walls[-1] if walls else float("nan"),
        "steps": end,
    }


def report(args: argparse.Namespace) -> list[str]:
    """One line per run; `to PufferLib's mean` is the time each run took to first reach the mean
    final score of the env's `pufferlib` row (its seeds in this table)."""
    lines = [
        "| env | row | seed | budget | score at 25 % | 50 % | 100 % | steps/s | wall | "
        "to PufferLib's mean | machine, date |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for env in args.envs:
        theirs = [Path(args.out) / env / "pufferlib" / f"seed{seed}.jsonl" for seed in args.seeds]
        finals = [summary(path)["scores"][-1] for path in theirs if path.exists()]
        finals = [score for score in finals if score is not None]  # None: it logged no score
        target = statistics.mean(finals) if finals else None
        for row in args.rows:
            for seed in args.seeds:
                path = Path(args.out) / env / row / f"seed{seed}.jsonl"
                if not path.exists():
                    lines.append(f"| {env} | {row} | {seed} | | not run | | | | | | |")
                    continue
                s = summary(path)
                cells = " | ".join(_score(x) for x in s["scores"])
                reach = None if target is None else seconds_to(load(path)[1], target)
                reached = "-" if reach is None else f"{reach / 60:.1f} min"
                lines.append(
                    f"| {env} | {row} | {seed} | {s['budget'] / 1e6:g}M | {cells} | "
                    f"{s['sps'] / 1e3:.0f}k | {s['wall'] / 60:.1f} min | {reached} | "
                    f"{s['machine']}, {s['date']} |"
                )
    return lines


def _score(x: float | None) -> str:
    """Three decimals for scores in [-2, 2] (win rates, squared's), one for the rest."""
    return "-" if x is None else f"{x:.3f}" if abs(x) < 2 else f"{x:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", help="Ocean env names (e.g. breakout pong)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads")
    parser.add_argument(
        "--device", choices=("cpu", "cuda"), default="cpu",
        help="where every row trains (cuda: PufferLib's vec backend as shipped)",
    )  # fmt: skip
    parser.add_argument("--pufferlib", required=True, metavar="DIR", help="PufferLib 3.0 venv")
    parser.add_argument("--out", required=True, help="folder of the stored curves")
    parser.add_argument(
        "--budget", type=int, metavar="STEPS",
        help="steps of every row instead of PufferLib's budget (smoke runs and quick checks: "
        "its learning rate anneals over this budget, so give such runs their own --out)",
    )  # fmt: skip
    parser.add_argument("--report", action="store_true", help="print the table only")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    args = parser.parse_args()
    python = pufferlib_python(args.pufferlib)
    if not args.report:
        print(f"{header('torch')}; {args.threads} thread(s)", flush=True)
        for env in args.envs:
            for seed in args.seeds:
                for row in args.rows:
                    start = time.time()
                    path = run(args, python, env, row, seed)
                    s = summary(path)
                    print(
                        f"{env} {row} seed {seed}: {s['scores']} ({time.time() - start:.0f} s)",
                        flush=True,
                    )
    lines = report(args)
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "ocean_learn", lines)


if __name__ == "__main__":
    main()
