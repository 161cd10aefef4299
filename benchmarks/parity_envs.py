"""Differential harness against PufferLib 3.0's Ocean envs: the same action streams on both.

For every Ocean env of both libraries, the same action streams (random, and each constant
action) on both; prints the first step where observations, rewards or episode ends differ, and
episode returns and lengths over at least `--episodes` episodes per stream with a two-sample
Kolmogorov-Smirnov test between the libraries.

    uv run python benchmarks/parity_envs.py --pufferlib /work/pl3 --episodes 1000
    uv run python benchmarks/parity_envs.py cartpole --pufferlib /work/pl3 --episodes 20

`parity_trainer.py` compares the two trainers. The PufferLib half runs this file under
PufferLib's interpreter (`_pufferlib-env`), in a scratch folder (its import writes
./resources); the two exchange .npz files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from peers import ks_test, pufferlib_config, pufferlib_python

HERE = Path(__file__).resolve()


# --- Both halves (under either interpreter) -------------------------------------------------


# The action streams both libraries see: uniformly random (a hash of step, row and seed, so
# numpy versions cannot make them differ), or one constant discrete action.
def stream_actions(space: dict, stream: str, step: int, rows: int, seed: int) -> np.ndarray:
    """(rows, *shape) actions of `stream` ('random' or 'const:K') at `step` for `space`, a
    dict from `_space_spec`."""
    index = np.arange(rows, dtype=np.uint64)[:, None]
    width = np.arange(max(1, space["width"]), dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        h = (np.uint64(step) * np.uint64(0x9E3779B97F4A7C15) + index * np.uint64(0xBF58476D1CE4E5B9)
             + width * np.uint64(0x94D049BB133111EB) + np.uint64(seed))  # fmt: skip
        h ^= h >> np.uint64(31)
        h *= np.uint64(0xD6E8FEB86659FD93)
        h ^= h >> np.uint64(32)
    if space["kind"] == "box":
        unit = (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)
        low, high = np.asarray(space["low"]), np.asarray(space["high"])
        return (low + unit * (high - low)).astype(np.float32).reshape(rows, *space["shape"])
    nvec = np.asarray(space["nvec"], dtype=np.uint64)
    if stream.startswith("const:"):
        actions = np.minimum(np.uint64(int(stream[6:])), nvec - np.uint64(1)) + 0 * h
    else:
        actions = h % nvec
    actions = actions.astype(np.int64)
    return actions[:, 0] if space["scalar"] else actions


def _space_spec(space) -> dict:
    """A JSON-able description of a Discrete, MultiDiscrete or Box action space."""
    name = type(space).__name__
    if name == "Discrete":
        return {"kind": "discrete", "nvec": [int(space.n)], "scalar": True, "width": 1}
    if name == "MultiDiscrete":
        nvec = [int(n) for n in np.asarray(space.nvec).ravel()]
        return {"kind": "discrete", "nvec": nvec, "scalar": False, "width": len(nvec)}
    low, high = (
        np.asarray(space.low, np.float64).ravel(),
        np.asarray(space.high, np.float64).ravel(),
    )
    low, high = np.clip(low, -1, 1), np.clip(high, -1, 1)  # unbounded boxes: sample [-1, 1]
    return {"kind": "box", "low": low.tolist(), "high": high.tolist(), "width": low.size,
            "shape": list(space.shape), "scalar": False}  # fmt: skip


# Steps recorded in full for the identity check, and the rows recorded.
IDENTITY_STEPS, IDENTITY_ROWS = 200, 8


def roll(env, stream: str, seed: int, episodes: int, max_steps: int) -> dict[str, np.ndarray]:
    """Step `env` (either library's vectorized Ocean env, reset with `seed`) with `stream`'s
    actions until `episodes` episodes have ended or `max_steps` steps; returns the first
    steps of a few rows in full, and every finished episode's return and length (from the
    reward and end flags, the same rule on both sides)."""
    obs, _ = env.reset(seed=seed)
    rows = len(obs)
    space = _space_spec(env.single_action_space)
    ret, length = np.zeros(rows), np.zeros(rows, np.int64)
    returns, lengths, step_rewards = [], [], []
    first = {"obs": [np.array(obs[:IDENTITY_ROWS], np.float64)], "rew": [], "done": []}
    for step in range(max_steps):
        actions = stream_actions(space, stream, step, rows, seed)
        obs, rewards, terminals, truncations, _ = env.step(actions)
        done = np.asarray(terminals, bool) | np.asarray(truncations, bool)
        ret += rewards
        step_rewards.append(float(np.sum(rewards)) / rows)
        length += 1
        returns.extend(ret[done].tolist())
        lengths.extend(length[done].tolist())
        ret[done], length[done] = 0.0, 0
        if step < IDENTITY_STEPS:
            first["obs"].append(np.array(obs[:IDENTITY_ROWS], np.float64))
            first["rew"].append(np.array(rewards[:IDENTITY_ROWS], np.float64))
            first["done"].append(np.array(done[:IDENTITY_ROWS]))
        if len(returns) >= episodes and step >= IDENTITY_STEPS:
            break
    return {
        "returns": np.array(returns),
        "lengths": np.array(lengths),
        "steps": np.array(step + 1),
        "step_rewards": np.array(step_rewards),
        **{f"first_{k}": np.array(v) for k, v in first.items()},
    }


# --- PufferLib's half (runs under its interpreter) -------------------------------------------


def pufferlib_env(spec: str, out: str) -> None:
    """Run PufferLib's env `spec['env']` through each stream; write `roll`'s arrays to `out`."""
    from pufferlib.ocean.environment import env_creator

    spec = json.loads(spec)
    results = {}
    for stream in spec["streams"]:
        # A fresh env per stream: some of its envs' reset() leaves state from the last stream.
        env = env_creator(f"puffer_{spec['env']}")(
            num_envs=spec["num_envs"], **spec["pufferlib_kwargs"]
        )
        for key, value in roll(
            env, stream, spec["seed"], spec["episodes"], spec["max_steps"]
        ).items():
            results[f"{stream}/{key}"] = value
    results["space"] = np.array(json.dumps(_space_spec(env.single_action_space)))
    results["num_agents"] = np.array(env.num_agents)
    np.savez(out, **results)
    os._exit(0)


# --- our half --------------------------------------------------------------------------------


def _first_difference(ours: np.ndarray, theirs: np.ndarray) -> int | None:
    """The first step (axis 0) where the arrays differ; None when they agree throughout."""
    if ours.shape[1:] != theirs.shape[1:]:
        return 0
    steps = min(len(ours), len(theirs))
    differs = ~np.isclose(ours[:steps], theirs[:steps], rtol=1e-5, atol=1e-6)
    bad = np.flatnonzero(differs.reshape(steps, -1).any(axis=1))
    return int(bad[0]) if len(bad) else None


def env_case(python: Path, env: str, args: argparse.Namespace) -> list[str]:
    """Both libraries' `env` through the same streams; returns the report lines."""
    from puffer.core import make
    from puffer.core.registry import env_creator
    from puffer.train.config import env_defaults

    ini = pufferlib_config(python, env)["env"]
    accepted = env_defaults(env_creator(env))
    # Our C configs take numbers where PufferLib's .ini writes True/False or a one-item list.
    kwargs = {
        k: int(v) if isinstance(v, bool) else v[0] if isinstance(v, list) and len(v) == 1 else v
        for k, v in ini.items()
        if k != "num_envs" and k in accepted
    }
    dropped = sorted(set(ini) - set(kwargs) - {"num_envs"})
    num_envs = max(1, min(int(ini.get("num_envs", 1)), args.num_envs))
    ours = make(env, num_envs=num_envs, **kwargs)
    space = _space_spec(ours.single_action_space)
    ours.close()
    streams = ["random"]
    if space["kind"] == "discrete":
        streams += [f"const:{k}" for k in range(min(2, min(space["nvec"])))]
    theirs_kwargs = {k: ini[k] for k in kwargs}
    spec = {"env": env, "num_envs": num_envs, "pufferlib_kwargs": theirs_kwargs,
            "streams": streams, "seed": args.seed, "episodes": args.episodes,
            "max_steps": args.max_steps}  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out.npz"
        done = subprocess.run(
            [str(python), str(HERE), "_pufferlib-env", json.dumps(spec), str(out)],
            cwd=scratch, capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0 or not out.exists():
            return [f"{env}: PufferLib's env failed: {done.stderr.strip().splitlines()[-1:]}"]
        theirs = dict(np.load(out))
    lines = [f"{env} ({num_envs} envs, {len(ours.rewards)} agents; PufferLib "
             f"{int(theirs['num_agents'])}){'; its keys ours lacks: ' + ', '.join(dropped) if dropped else ''}"]  # fmt: skip
    if json.loads(str(theirs["space"])) != space:
        lines.append(f"  action spaces differ: ours {space}, PufferLib {theirs['space']}")
    for stream in streams:
        fresh = make(env, num_envs=num_envs, **kwargs)
        mine = roll(fresh, stream, args.seed, args.episodes, args.max_steps)
        fresh.close()
        t = {k.split("/", 1)[1]: v for k, v in theirs.items() if k.startswith(f"{stream}/")}
        first = [
            _first_difference(mine[f"first_{k}"], t[f"first_{k}"]) for k in ("obs", "rew", "done")
        ]
        where = [f for f in first if f is not None]
        same = "identical for all" if not where else f"first difference at step {min(where)} of"
        stats = []
        for key in ("returns", "lengths"):
            a, b = mine[key], t[key]
            _, p = ks_test(a, b)
            mean = lambda x: f"{x.mean():.3g}" if len(x) else "-"  # noqa: E731
            stats.append(f"{key[:-1]} {mean(a)} vs {mean(b)} (KS p={p:.2g})")
        # Reward per agent step over the steps both sides ran (one side may stop early).
        common = min(len(mine["step_rewards"]), len(t["step_rewards"]))
        per_step = [float(x["step_rewards"][:common].mean()) for x in (mine, t)]
        lines.append(
            f"  {stream:8s} {same} {IDENTITY_STEPS} steps; reward per agent step "
            f"{per_step[0]:.4g} vs {per_step[1]:.4g} ({common} steps); episodes "
            f"{len(mine['returns'])} vs {len(t['returns'])}; " + "; ".join(stats)
        )
    return lines


# The Ocean envs both libraries have, under the same name.
SHARED_ENVS = (
    "blastar", "boids", "breakout", "cartpole", "checkers", "connect4", "convert", "cpr",
    "drone", "enduro", "freeway", "go", "grid", "pacman", "pong", "rware", "school", "snake",
    "squared", "target", "terraform", "tetris", "tower_climb", "trash_pickup", "tripletriad",
)  # fmt: skip


def env_report(args: argparse.Namespace) -> None:
    from puffer.cli.bench import header  # not at the top: PufferLib's interpreter loads this file

    python = pufferlib_python(args.pufferlib)
    print(header("torch"))
    print(
        f"{args.episodes}+ episodes per stream (at most {args.max_steps} steps), seed {args.seed}"
    )
    for env in args.envs or SHARED_ENVS:
        try:
            lines = env_case(python, env, args)
        except Exception as error:  # one env's failure is a row of the report, not its end
            lines = [f"{env}: could not run ours: {type(error).__name__}: {error}"]
        for line in lines:
            print(line, flush=True)


def main() -> None:
    # PufferLib's half, which `env_case` starts under its interpreter with a spec and a path.
    if sys.argv[1:2] == ["_pufferlib-env"]:
        pufferlib_env(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="*", help=f"default: {' '.join(SHARED_ENVS)}")
    parser.add_argument("--pufferlib", required=True, metavar="DIR", help="PufferLib 3.0 venv")
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--max-steps", type=int, default=20000)
    parser.add_argument("--num-envs", type=int, default=64, help="at most this many env copies")
    parser.add_argument("--seed", type=int, default=0)
    env_report(parser.parse_args())


if __name__ == "__main__":
    main()
