"""Ocean learning with the shipped configs, beside PufferLib 3.0's trainer on its own config.

For each env and seed it runs `puffer train ENV --train.total-timesteps N --train.seed S` (the
env's shipped TOML, nothing else on the command line) and, with `--pufferlib DIR`, PufferLib
3.0's `pufferl.train("puffer_ENV")` with its shipped `.ini` at the same budget and seed (CPU,
`--vec.backend Serial --vec.num-envs 1`: its config asks for more workers than 2 cores have).
Both run one after the other in fresh processes with `--threads` torch threads, so they see the
same machine. Per run it prints the last logged score (the env's `score` log: the mean over the
last episodes, as each trainer reports it), the steps reached and the wall time.

    uv run python benchmarks/ocean_learn.py breakout pong snake --steps 5000000 \\
        --pufferlib /work/pl3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from train import pufferlib_python  # benchmarks/train.py: the PufferLib venv's interpreter

# Run by PufferLib's interpreter from a scratch folder (its import writes ./resources).
PUFFERLIB_SCRIPT = """
import json, sys, torch
env, steps, seed, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
sys.argv = ["puffer", "--train.device", "cpu", "--vec.backend", "Serial", "--vec.num-envs", "1",
            "--train.total-timesteps", steps, "--train.seed", seed]
from pufferlib import pufferl
logs = [row for row in pufferl.train(env) if "environment/score" in row]
# The last row is its post-training evaluation (32 more epochs, counted in agent_steps): report
# the last training row, like ours, when one was logged.
row = (logs[:-1] or logs)[-1]
print("PUFFERLIB " + json.dumps({"score": row["environment/score"], "steps": row["agent_steps"]}))
"""


def ours(env: str, steps: int, seed: int, threads: int) -> dict[str, float]:
    """`puffer train` with the shipped TOML: the last logged score and the steps reached."""
    with tempfile.TemporaryDirectory() as data_dir:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "puffer.cli", "train", env),
                *("--train.total-timesteps", str(steps), "--train.seed", str(seed)),
                *("--train.torch-threads", str(threads), "--train.data-dir", data_dir),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"puffer train {env} failed:\n{done.stdout[-2000:]}{done.stderr}")
        (metrics,) = Path(data_dir).glob(f"{env}/*/metrics.jsonl")
        rows = [json.loads(line) for line in metrics.read_text().splitlines()]
    scored = [row for row in rows if "environment/score" in row]
    if not scored:
        raise SystemExit(f"puffer train {env}: no episode finished, so no score was logged")
    return {"score": scored[-1]["environment/score"], "steps": rows[-1]["step"]}


def pufferlib(python: Path, env: str, steps: int, seed: int, threads: int) -> dict[str, float]:
    """PufferLib 3.0's trainer on `puffer_ENV` with its shipped config."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [
                str(python),
                "-c",
                PUFFERLIB_SCRIPT,
                f"puffer_{env}",
                str(steps),
                str(seed),
                str(threads),
            ],
            cwd=scratch,
            env={**os.environ, "OMP_NUM_THREADS": str(threads)},
            capture_output=True,
            text=True,
        )
    lines = [x for x in done.stdout.splitlines() if x.startswith("PUFFERLIB ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"PufferLib's trainer failed on {env}:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1].removeprefix("PUFFERLIB "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", help="Ocean env names (e.g. breakout pong snake)")
    parser.add_argument("--steps", type=int, default=5_000_000, help="budget of every run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--pufferlib", metavar="DIR", help="PufferLib 3.0 venv (its rows)")
    args = parser.parse_args()
    python = pufferlib_python(args.pufferlib) if args.pufferlib else None
    print(
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f}; {args.steps:,} steps per run, {args.threads} thread(s)"
    )
    runners = {"puffer": ours}
    if python is not None:
        runners["PufferLib 3.0"] = lambda *a: pufferlib(python, *a)
    for env in args.envs:
        for seed in args.seeds:
            for name, runner in runners.items():
                start = time.perf_counter()
                result = runner(env, args.steps, seed, args.threads)
                print(
                    f"  {env:10s} seed {seed}  {name:14s} score {result['score']:8.3f} at "
                    f"{int(result['steps']):,} steps, {time.perf_counter() - start:6.0f} s wall "
                    f"(load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
