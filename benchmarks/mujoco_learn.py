"""Gymnasium MuJoCo v5 at 1M steps: `puffer train gym-ENV` beside Stable-Baselines3's PPO with
its defaults and with RL Baselines3 Zoo's tuned PPO, per env and seed.

Rows per env and seed:
- `puffer`: `puffer train gym-<Env>-v5 --train.total-timesteps 1000000 --train.seed S` under
  the env's shipped config, nothing else. Where that config includes a TOML of the env's own
  (`config/envs/gym-<Env>-v5.toml`: HalfCheetah's and Swimmer's are RL Zoo's tuned PPO, Pusher's
  was tuned on seeds 0-2) the table labels the row "ours (tuned)";
- `sb3`: `PPO("MlpPolicy", env, seed=S)` with SB3's defaults (one env, 2,048 steps a rollout,
  64-step minibatches, 10 epochs, Adam 3e-4, no normalization);
- `zoo`: SB3's PPO with the env's entry in RL Zoo's `hyperparams/ppo.yml`, its `-v4` id's or,
  where the zoo tuned only the `-v2` env (HumanoidStandup, InvertedDoublePendulum,
  InvertedPendulum, Reacher), that one's; normalization through `VecNormalize` as the zoo does.
  Every row runs the same 1M steps (the zoo's Humanoid entry is tuned for 10M). `--zoo-yml`
  names the file: rl_zoo3 pins an older Gymnasium, so take it from its wheel instead of
  installing it (`pip download rl_zoo3 --no-deps`, then unzip `rl_zoo3/hyperparams/ppo.yml`).
  The file is data: its policy keywords are read as literals with `torch.nn` activations named
  from a fixed list (`zoo_hyperparams`), never evaluated.

The score of a run is the mean return of its last 100 training episodes (the same definition on
every row: puffer's `recent["episode_return"]`, SB3's Monitor buffer). Each run writes it with
its wall time, machine, date and the 1-minute load average before and after it to
`--out/ENV/ROW/seedS.json` (by default under `benchmarks/results/mujoco/`, committed) and is
skipped when that file exists, so the table fills over several sittings. `--report` prints the
table from the stored results (mean ± sd over the seeds, ours against each SB3 row: a lead only
outside seed noise); `--write` puts it into docs/results/mujoco.md.

    uv run python benchmarks/mujoco_learn.py Hopper Swimmer --seeds 3 4 5 --zoo-yml ppo.yml
    uv run python benchmarks/mujoco_learn.py --seeds 3 4 5 --report --write
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from results_page import PAGES, machines, mean_sd, verdict, write_table

from puffer.cli.bench import header, record

ENVS = (
    "Ant", "HalfCheetah", "Hopper", "Humanoid", "HumanoidStandup", "InvertedDoublePendulum",
    "InvertedPendulum", "Pusher", "Reacher", "Swimmer", "Walker2d",
)  # fmt: skip
ROWS = ("puffer", "sb3", "zoo")
STEPS = 1_000_000
OUT = Path(__file__).resolve().parent / "results" / "mujoco"
PAGE = PAGES / "mujoco.md"  # its table sits between the `mujoco_learn` markers there
# The activations a zoo entry's `activation_fn=nn.X` may name.
ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU")
# Keys of a zoo entry that are not PPO's keywords: the budget (every row runs --steps), the
# policy class (always MlpPolicy here) and the env's wrappers (taken apart below).
NOT_PPO = ("n_timesteps", "policy", "n_envs", "normalize", "env_wrapper", "frame_stack")


def zoo_hyperparams(zoo: dict[str, Any], env: str) -> tuple[str, dict[str, Any]] | None:
    """RL Zoo's tuned PPO for MuJoCo `env` ("Hopper"), as (the zoo id it came from, a dict of
    `n_envs`, `normalize` (VecNormalize's keywords, or None) and `ppo` (PPO's keywords, with
    `policy_kwargs` a dict and `lin_X` schedules as SB3's callables)); None where the zoo has
    neither a `-v4` nor a `-v2` entry for it.

    `zoo` is the parsed ppo.yml. Its `policy_kwargs` and `normalize` strings are read as data
    (`_literal_kwargs`). As the zoo does, VecNormalize scales returns at the entry's gamma.

    Raises:
        ValueError: a string holds anything but literals, `dict(...)` and `nn.<activation>`
            (naming the entry and the key).
    """
    zoo_id = next((i for i in (f"{env}-v4", f"{env}-v2") if i in zoo), None)
    if zoo_id is None:
        return None
    entry = dict(zoo[zoo_id])
    normalize = entry.get("normalize")
    if isinstance(normalize, str):  # "dict(norm_obs=False)": which of the two it normalizes
        normalize = _literal_kwargs(normalize, f"{zoo_id}'s normalize")
    ppo: dict[str, Any] = {}
    for key, value in entry.items():
        if key in NOT_PPO:
            continue
        if key == "policy_kwargs" and isinstance(value, str):
            value = _literal_kwargs(value, f"{zoo_id}'s policy_kwargs")
        elif isinstance(value, str) and value.startswith("lin_"):
            # SB3 calls a schedule with the progress remaining, 1 at the start and 0 at the end.
            value = _linear_schedule(float(value.removeprefix("lin_")))
        ppo[key] = value
    options = dict(normalize) if isinstance(normalize, dict) else {} if normalize else None
    if options is not None and "gamma" in entry:
        options["gamma"] = entry["gamma"]  # as the zoo does: returns scaled at PPO's discount
    return zoo_id, {"n_envs": entry.get("n_envs", 1), "normalize": options, "ppo": ppo}


def _linear_schedule(start: float) -> Any:
    return lambda progress_remaining: progress_remaining * start


def _literal_kwargs(text: str, what: str) -> dict[str, Any]:
    """`dict(a=1, act=nn.ReLU, arch=dict(pi=[64]))` as a dict, activations as torch classes."""
    import torch.nn as nn

    def value(node: ast.AST) -> Any:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
        ):
            if node.args or any(k.arg is None for k in node.keywords):
                raise ValueError(f"{what}: dict(...) takes keywords only ({text!r})")
            return {k.arg: value(k.value) for k in node.keywords}
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "nn"
            and node.attr in ACTIVATIONS
        ):
            return getattr(nn, node.attr)
        try:
            return ast.literal_eval(node)
        except ValueError:
            raise ValueError(
                f"{what} holds {ast.unparse(node)!r}: only literals, dict(...) and "
                f"nn.{{{', '.join(ACTIVATIONS)}}} are read"
            ) from None

    try:
        tree = ast.parse(" ".join(text.split()), mode="eval")
    except SyntaxError as error:
        raise ValueError(f"{what} does not parse ({text!r}): {error}") from None
    kwargs = value(tree.body)
    if not isinstance(kwargs, dict):
        raise ValueError(f"{what} is not a dict(...) ({text!r})")
    return kwargs


def run_puffer(env_id: str, seed: int, steps: int) -> float:
    """Train `puffer train gym-<env_id>` and return its last-100-episode mean return (its run
    folder, checkpoints and metrics go to a temporary data dir, removed after)."""
    import tempfile

    from puffer.train import train

    flags = ["--train.total-timesteps", str(steps), "--train.seed", str(seed)]
    with tempfile.TemporaryDirectory(prefix="mujoco_learn_") as data_dir:
        result = train(f"gym-{env_id}", overrides=[*flags, "--train.data-dir", data_dir])
    return result.recent.get("episode_return", float("nan"))


def run_sb3(env_id: str, seed: int, steps: int, zoo: tuple[str, dict[str, Any]] | None) -> float:
    """Train SB3's PPO (its defaults, or the zoo's entry `zoo`) and return the mean return of
    its last 100 training episodes."""
    import numpy as np
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    tuned = zoo[1] if zoo else {"n_envs": 1, "normalize": None, "ppo": {}}
    env = make_vec_env(env_id, n_envs=tuned["n_envs"], seed=seed)
    if tuned["normalize"] is not None:
        env = VecNormalize(env, **tuned["normalize"])
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", **tuned["ppo"])
    model.learn(steps)
    return float(np.mean([info["r"] for info in model.ep_info_buffer]))


def child(argv: list[str]) -> None:
    """One run, in a process of its own (so each gets its own torch state): prints one line,
    `RESULT {"score": ...}`."""
    row, env, seed, steps, zoo_yml = argv[0], argv[1], int(argv[2]), int(argv[3]), argv[4]
    env_id = f"{env}-v5"
    if row == "puffer":
        score = run_puffer(env_id, seed, steps)
    else:
        zoo = None
        if row == "zoo":
            import yaml

            zoo = zoo_hyperparams(yaml.safe_load(Path(zoo_yml).read_text()), env)
        score = run_sb3(env_id, seed, steps, zoo)
    print("RESULT " + json.dumps({"score": score}), flush=True)


def run(args: argparse.Namespace, env: str, row: str, seed: int) -> Path | None:
    """Run one (env, row, seed) unless stored; returns the result's path (None: the zoo has no
    entry for `env`)."""
    path = Path(args.out) / env / row / f"seed{seed}.json"
    if path.exists():
        return path
    fields: dict[str, Any] = {}
    if row == "zoo":
        if args.zoo_yml is None:
            raise SystemExit("the zoo row needs RL Zoo's ppo.yml: give --zoo-yml FILE")
        import yaml

        found = zoo_hyperparams(yaml.safe_load(Path(args.zoo_yml).read_text()), env)
        if found is None:
            return None
        fields["zoo_id"] = found[0]
    here = str(Path(__file__).resolve().parent)
    code = f"import sys; sys.path.insert(0, {here!r}); import mujoco_learn; mujoco_learn.child(sys.argv[1:])"
    command = [sys.executable, "-c", code, row, env, str(seed), str(args.steps), str(args.zoo_yml)]
    load, start = os.getloadavg()[0], time.time()
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{row} on {env}-v5 seed {seed} failed:\n{done.stderr[-3000:]}")
    result = record("mujoco_learn", env=env, row=row, seed=seed, steps=args.steps,
                    **json.loads(lines[-1][7:]), **fields, wall=time.time() - start,
                    load=[load, os.getloadavg()[0]])  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result) + "\n")
    return path


def has_own_toml(env: str) -> bool:
    """Whether `gym-<env>-v5`'s shipped config includes a TOML of the env's own."""
    from puffer.core import env_creator
    from puffer.train.config.sources import config_sources, source_origin

    name = f"gym-{env}-v5"
    sources = config_sources(name, env_creator(name))
    return any(not callable(s) and source_origin(s) == f"{name}.toml" for s in sources)


def report(args: argparse.Namespace) -> list[str]:
    """The table: per env, each row's mean ± sd over the stored seeds (and each seed's score),
    ours against SB3's defaults and against the zoo, each row's median wall time and machines."""
    lines = [
        "| env | ours | SB3 PPO defaults | RL Zoo's tuned PPO | ours vs SB3 defaults "
        "| ours vs RL Zoo | minutes a run (ours / SB3 / zoo) | seeds, machines |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for env in args.envs:
        runs = {row: _stored(Path(args.out) / env / row, args.seeds) for row in ROWS}
        if not any(runs.values()):
            continue
        scores = {row: [r["score"] for r in found] for row, found in runs.items()}
        cells = [_scores(scores[row]) for row in ROWS]
        if runs["zoo"]:
            cells[2] += f" ({runs['zoo'][0]['zoo_id']})"
        if has_own_toml(env):
            cells[0] = f"ours (tuned): {cells[0]}"
        versus = [verdict(scores["puffer"], scores[peer]) for peer in ("sb3", "zoo")]
        walls = " / ".join(
            f"{statistics.median(r['wall'] for r in runs[row]) / 60:.1f}" if runs[row] else "-"
            for row in ROWS
        )
        every = [r for row in ROWS for r in runs[row]]
        seeds = ", ".join(str(s) for s in sorted({r["seed"] for r in every}))
        lines.append(
            f"| {env} | {cells[0]} | {cells[1]} | {cells[2]} | {versus[0]} | {versus[1]} "
            f"| {walls} | {seeds}; {machines(every)} |"
        )
    return lines


def _stored(folder: Path, seeds: list[int]) -> list[dict[str, Any]]:
    paths = [folder / f"seed{s}.json" for s in seeds]
    return [json.loads(p.read_text()) for p in paths if p.exists()]


def _scores(scores: list[float]) -> str:
    """`mean ± sd (each seed's)`, or 'not run'."""
    if not scores:
        return "not run"
    each = ", ".join(mean_sd([s]).removesuffix(" (1 seed)") for s in scores)
    return mean_sd(scores) if len(scores) == 1 else f"{mean_sd(scores)} ({each})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="*", default=list(ENVS), help="default: all of v5")
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--zoo-yml", help="RL Zoo's hyperparams/ppo.yml (the zoo rows)")
    parser.add_argument("--steps", type=int, default=STEPS, help="budget of every run")
    parser.add_argument("--out", default=str(OUT), help=f"folder of the results (default {OUT})")
    parser.add_argument("--report", action="store_true", help="print the table only")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    args = parser.parse_args()
    if not args.report:
        print(header("torch", "stable-baselines3", "mujoco"), flush=True)
        for env in args.envs:
            for seed in args.seeds:
                for row in args.rows:
                    path = run(args, env, row, seed)
                    if path is not None:
                        print(f"{env} {row} seed {seed}: {path.read_text()}", end="", flush=True)
    lines = report(args)
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "mujoco_learn", lines)


if __name__ == "__main__":
    main()
