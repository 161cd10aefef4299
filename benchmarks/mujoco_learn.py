"""Gymnasium MuJoCo v5 at 1M steps: `puffer train gym-ENV` with our defaults beside
Stable-Baselines3's PPO with its defaults, and with RL Baselines3 Zoo's tuned PPO where the zoo
has an entry for the env.

Rows per env and seed:
- `puffer`: `puffer train gym-<Env>-v5 --train.total-timesteps 1000000 --train.seed S`, the
  defaults derived for the env under the MuJoCo family TOML, nothing else;
- `sb3`: `PPO("MlpPolicy", gymnasium.make(env), seed=S)` with SB3's defaults (one env, 2,048
  steps a rollout, 64-step minibatches, 10 epochs, Adam 3e-4, no normalization);
- `zoo`: SB3's PPO with RL Zoo's `hyperparams/ppo.yml` entry for the env's v4 id
  (normalization through `VecNormalize` as the zoo does), when there is one. `--zoo-yml` names
  that file: rl_zoo3 pins an older Gymnasium, so take the file from its wheel instead of
  installing it (`pip download rl_zoo3 --no-deps`, then unzip `rl_zoo3/hyperparams/ppo.yml`).

The score of a run is the mean return of its last 100 training episodes (the same definition on
every row: puffer's `recent["episode_return"]`, SB3's Monitor buffer); each run writes it with
its wall time to `--out/ENV/ROW/seedS.json` and is skipped when that file exists, so the table
fills over several sittings. `--report` prints the table from the stored results: one config a
row, where docs/results/mujoco.md's tables set several configs of ours side by side, built by
hand from such runs (the script's table is their raw material, so it is not written there).

    uv run python benchmarks/mujoco_learn.py --seeds 0 1 2 --zoo-yml ppo.yml --out /work/notes/mujoco
    uv run python benchmarks/mujoco_learn.py --out /work/notes/mujoco --report
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from puffer.cli.bench import header, record

ENVS = (
    "Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup", "InvertedDoublePendulum",
    "InvertedPendulum", "Pusher", "Reacher", "Swimmer", "Walker2d",
)  # fmt: skip
ROWS = ("puffer", "sb3", "zoo")
STEPS = 1_000_000

# One run in a fresh process (so each gets the machine alone and its own torch state); prints
# one JSON line with the last-100-episode mean return.
PUFFER_RUN = """
import json, sys
from puffer.train import train
env, seed, steps, data_dir = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
flags = ["--train.total-timesteps", steps, "--train.seed", seed, "--train.data-dir", data_dir]
result = train(env, overrides=flags)
print("RESULT " + json.dumps({"score": result.recent.get("episode_return", float("nan"))}))
"""

SB3_RUN = """
import json, sys
import gymnasium, numpy as np
from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecNormalize
env_id, seed, steps, row = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kwargs, n_envs, normalize = {}, 1, None
if row == "zoo":
    import yaml
    zoo = yaml.safe_load(open(sys.argv[5]).read())
    entry = dict(zoo[env_id.replace("-v5", "-v4")])
    n_envs = entry.pop("n_envs", 1)
    normalize = entry.pop("normalize", None)
    for key in ("n_timesteps", "policy", "env_wrapper", "frame_stack"):
        entry.pop(key, None)
    for key, value in list(entry.items()):
        if isinstance(value, str) and value.startswith("lin_"):
            start = float(value[4:])
            entry[key] = lambda progress, start=start: progress * start
        elif key == "policy_kwargs" and isinstance(value, str):
            import torch.nn as nn
            entry[key] = eval(value, {"dict": dict, "nn": nn})
    kwargs = entry
env = make_vec_env(env_id, n_envs=n_envs, seed=seed)
if normalize:
    options = normalize if isinstance(normalize, dict) else {}
    if isinstance(normalize, str):
        options = eval(normalize)
    env = VecNormalize(env, **options)
model = PPO("MlpPolicy", env, seed=seed, device="cpu", **kwargs)
model.learn(steps)
returns = [info["r"] for info in model.ep_info_buffer]
print("RESULT " + json.dumps({"score": float(np.mean(returns))}))
"""


def has_zoo_entry(zoo_yml: str | None, env: str) -> bool:
    """Whether RL Zoo's ppo.yml (`zoo_yml`, None: not given) tunes `env`'s v4 id."""
    if zoo_yml is None:
        return False
    import yaml

    return f"{env}-v4" in yaml.safe_load(Path(zoo_yml).read_text())


def run(args: argparse.Namespace, env: str, row: str, seed: int) -> Path | None:
    """Run one (env, row, seed) unless stored; returns the result's path (None: skipped)."""
    path = Path(args.out) / env / row / f"seed{seed}.json"
    if path.exists():
        return path
    env_id = f"{env}-v5"
    if row == "zoo" and not has_zoo_entry(args.zoo_yml, env):
        return None
    start = time.time()
    if row == "puffer":
        with_dir = Path(args.out) / "runs"
        command = [sys.executable, "-c", PUFFER_RUN, f"gym-{env_id}", str(seed), str(args.steps),
                   str(with_dir)]  # fmt: skip
    else:
        command = [sys.executable, "-c", SB3_RUN, env_id, str(seed), str(args.steps), row,
                   str(args.zoo_yml)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{row} on {env_id} seed {seed} failed:\n{done.stderr[-3000:]}")
    result = record("mujoco_learn", env=env, row=row, seed=seed, steps=args.steps,
                    **json.loads(lines[-1][7:]), wall=time.time() - start)  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result))
    return path


def report(args: argparse.Namespace) -> None:
    print(f"| env | {' | '.join(ROWS)} | puffer / sb3 |")
    print(f"|---|{'---|' * len(ROWS)}---|")
    for env in args.envs:
        means = {}
        cells = []
        for row in ROWS:
            scores = []
            for seed in args.seeds:
                path = Path(args.out) / env / row / f"seed{seed}.json"
                if path.exists():
                    scores.append(json.loads(path.read_text())["score"])
            if scores:
                means[row] = statistics.mean(scores)
                cells.append(f"{means[row]:.0f} ({', '.join(f'{s:.0f}' for s in scores)})")
            else:
                cells.append("not run")
        ratio = (
            f"{means['puffer'] / means['sb3']:.2f}"
            if "puffer" in means and "sb3" in means and means["sb3"] > 0
            else "-"
        )
        print(f"| {env} | {' | '.join(cells)} | {ratio} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="*", default=list(ENVS), help="default: all of v5")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--zoo-yml", help="RL Zoo's hyperparams/ppo.yml (the zoo rows)")
    parser.add_argument("--steps", type=int, default=STEPS, help="budget of every run")
    parser.add_argument("--out", required=True, help="folder of the stored results")
    parser.add_argument("--report", action="store_true", help="print the table only")
    args = parser.parse_args()
    if not args.report:
        print(header("torch", "stable-baselines3", "mujoco"), flush=True)
        for seed in args.seeds:
            for env in args.envs:
                for row in args.rows:
                    path = run(args, env, row, seed)
                    if path is not None:
                        print(f"{env} {row} seed {seed}: {path.read_text()}", flush=True)
    report(args)


if __name__ == "__main__":
    main()
