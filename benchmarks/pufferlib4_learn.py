"""Ocean learning at PufferLib 4.0's configs: ours with PufferNet at each 4.0 config, beside
ours with the policy each env shipped before PufferNet (today's policy), per seed.

Rows per env and seed:
- `pufferlib4`: `puffer train ENV --config benchmarks/configs/pufferlib4_ENV.toml`, PufferNet
  at PufferLib 4.0's config/ENV.ini (or, where 4.0 has none that fits, the shipped config
  with PufferNet as its policy; each file's comment says which and why);
- `pufferlib3`: `puffer train ENV --config benchmarks/configs/pufferlib3_ENV.toml`, the policy
  and config shipped before PufferNet (PufferLib 3.0's config for breakout, pong, connect4 and
  squared; each file's comment says what it is);
- `pl3`: PufferLib 3.0's own trainer (`pufferl.train("puffer_ENV")`, the venv built by
  shared/anchors/pl3/setup.sh, given as `--pufferlib DIR`) at its own shipped `.ini`, all its
  agents, to its own budget (`ocean_learn.pufferlib_row`: its Serial backend steps every env
  object of the config in one process, one torch thread), or with `--pl3-stop-at STEPS`
  stopped once it has logged STEPS steps, its schedule still the whole budget's (the table
  then says "stopped short of its N");
- `bf16` (breakout only, reported where stored): the shipped config with the policy's passes in
  bfloat16 (`benchmarks/configs/bf16_ENV.toml`), float32 master weights and optimizer;
- `graphed` (breakout only, for a GPU; reported where stored): the shipped config with each
  minibatch's update replayed from one CUDA graph (`train.update_graph`,
  `benchmarks/configs/graphed_ENV.toml`);
- `unmasked` (connect4 only, reported where stored): the pufferlib3 row with its legal-action
  masks off (`train.action_masks = false`, `benchmarks/configs/unmasked_ENV.toml`), to compare
  with PufferLib 3.0's trainer, which has no masks, on the same terms.

Each run's curve (steps, score, steps/s, loss statistics; the first line its machine, date and
the 1-minute load average before and after it) is stored as `--out/ENV/ROW/seedS.jsonl`, by
default under `benchmarks/results/pufferlib4/`, so the table in the docs' results page
(docs/results/ocean.md) rebuilds from the checkout (`--report` prints it, `--write` puts it
into the page). A run made by hand (`puffer train ...`, e.g. beside
other work) is stored with `--import RUN_DIR`. The table gives mean ± sd over the seeds of the
score at 25 %, 50 % and 100 % of the smallest budget among the env's rows (the last logged
window at or before each point, the same steps for every row), then at the end of the row's own
budget, each seed's training time (the logged iterations' steps at their steps/s: no start-up,
the same rule for both trainers), the steps and training time each seed took to first log a
score at or above each of `--targets` (by default `WAYPOINTS`, then PufferLib 5.0's published
score; "not reached in N steps" where it never did) and the median steps/s; runs that recorded
a load average are labelled loaded. `--device cuda` trains every row on the GPU (PufferLib 3.0's
trainer then with its shipped vec backend), and the GPU's name follows the machine's.

    uv run python benchmarks/pufferlib4_learn.py breakout --seeds 0 1 2 --threads 1
    uv run python benchmarks/pufferlib4_learn.py breakout --import experiments/breakout/RUN --seed 0
    uv run python benchmarks/pufferlib4_learn.py pong --rows pl3 --pufferlib /work/pl3venv
    uv run python benchmarks/pufferlib4_learn.py breakout --rows pufferlib4 pl3 --device cuda --pufferlib DIR
    uv run python benchmarks/pufferlib4_learn.py breakout --seeds 0 1 2 --report --write
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from ocean_learn import LOSSES, load, name_the_gpu, pufferlib_row, run_ours, score_at
from peers import pufferlib_config, pufferlib_python
from results_page import PAGES, machines, mean_sd, verdict, write_table

from puffer.cli.bench import record

HERE = Path(__file__).parent
PAGE = PAGES / "ocean.md"  # its table sits between the `pufferlib4_learn` markers there
ROWS = ("pufferlib4", "pufferlib3", "pl3")
# Rows run for some envs only, reported where their curves are stored: `bf16`, the shipped config
# with `train.precision = "bfloat16"` (configs/bf16_ENV.toml); `unmasked`, the pufferlib3 row
# with `train.action_masks = false` (configs/unmasked_ENV.toml); `graphed`, the shipped config
# with `train.update_graph = true` (configs/graphed_ENV.toml).
EXTRA_ROWS = ("bf16", "unmasked", "graphed")
# Pairs compared besides the first row against each other one: our trainer against PufferLib
# 3.0's at the same config (pufferlib3 against pl3, with masks off on both sides for connect4).
ALSO_COMPARED = (("pufferlib3", "pl3"), ("unmasked", "pl3"))
# Envs whose legal-action masks our rows use and PufferLib 3.0's trainer cannot: a row with
# masks is compared only with rows with masks, a row without (`UNMASKED_ROWS`) only with rows
# without, or the verdict would measure the masks, not the trainers.
MASKED_ENVS = ("connect4",)
UNMASKED_ROWS = ("pl3", "unmasked")
# The points of the budget each row's score is read at (of the env's smallest budget).
FRACTIONS = (0.25, 0.5, 1.0)
# PufferLib 5.0's published scores (its prerelease status page), the time-to-score targets.
TARGETS = {"breakout": 863.97, "pong": 21.0, "cartpole": 200.0, "connect4": 0.966}
# Scores timed on the way there: a published score no row reaches (pong's 21, every point of
# every game) leaves a column of "not reached" that says nothing of the rows' pace.
WAYPOINTS = {"breakout": (400.0, 800.0), "pong": (20.0,)}
# The steps PufferLib 5.0 took to its published score, where its page gives them.
TARGET_STEPS = {"breakout": "108.5M"}


def flags(env: str, row: str) -> list[str]:
    """`puffer train ENV` flags of a row: its config file in benchmarks/configs/."""
    path = HERE / "configs" / f"{row}_{env}.toml"
    if not path.exists():
        raise SystemExit(f"no {path.name} for the {row} row of {env}")
    return ["--config", str(path)]


def run_pl3(args: argparse.Namespace, env: str, seed: int, path: Path) -> tuple[list[dict], int]:
    """The `pl3` row: PufferLib 3.0's trainer at its shipped config for `env`, stopped once it
    has logged `--pl3-stop-at` steps where that is given; its curve and its config's budget."""
    if args.pufferlib is None:
        raise SystemExit(
            "the pl3 row runs PufferLib 3.0's trainer: pass --pufferlib DIR, the venv built by "
            "shared/anchors/pl3/setup.sh (or leave pl3 out of --rows)"
        )
    python = pufferlib_python(args.pufferlib)
    config = pufferlib_config(python, env)
    curve = pufferlib_row(
        python, env, seed, args.threads, config, path, args.device, args.pl3_stop_at
    )
    return curve, int(config["train"]["total_timesteps"])


def curve_of(
    metrics: Path, score: str = "environment/score", episodes: str | None = None
) -> list[dict]:
    """A run's metrics.jsonl as curve rows (step, steps/s, score, loss statistics): the score
    is the `score` key's value, with the count of episodes it averages under `episodes` when
    that key is given."""
    curve = []
    for line in metrics.read_text().splitlines():
        row = json.loads(line)
        point = {"step": int(row["step"]), "sps": row["performance/sps"]}
        if score in row:
            point["score"] = row[score]
            if episodes is not None:
                point["episodes"] = int(row.get(episodes, 0))
        point.update({k: row["losses/" + k] for k in LOSSES if "losses/" + k in row})
        curve.append(point)
    return curve


def store(path: Path, meta: dict, curve: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(json.dumps(x) for x in [meta, *curve]) + "\n")
    tmp.replace(path)


def budget_of(curve: list[dict], run_config: Path | None) -> int:
    if run_config is not None and run_config.exists():
        return int(json.loads(run_config.read_text())["train"]["total_timesteps"])
    return curve[-1]["step"]


def training_seconds(curve: list[dict]) -> float:
    """A run's training time: each logged iteration's steps at its steps/s (no start-up)."""
    seconds, last = 0.0, 0
    for point in curve:
        seconds += (point["step"] - last) / point["sps"]
        last = point["step"]
    return seconds


def reach(curve: list[dict], target: float) -> tuple[int, float] | None:
    """(steps, training seconds) at the first logged score at or above `target`; None if the
    run never logged one."""
    for i, point in enumerate(curve):
        if point.get("score", float("-inf")) >= target:
            return point["step"], training_seconds(curve[: i + 1])
    return None


def _to_target(curves: list[list[dict]], target: float) -> str:
    """Each seed's steps and training minutes to `target`, or 'not reached in N steps' (once
    where no seed reached it and every seed ran the same steps)."""
    cells = []
    for curve in curves:
        got = reach(curve, target)
        cells.append(
            f"not reached in {_steps(curve[-1]['step'])} steps"
            if got is None
            else f"{_steps(got[0])} steps, {got[1] / 60:.1f} min"
        )
    return cells[0] if len(set(cells)) == 1 and cells[0].startswith("not") else "; ".join(cells)


def report(args: argparse.Namespace) -> list[str]:
    """The table of the stored runs: one header per env, one line per row."""
    lines = []
    for env in args.envs:
        targets = args.targets or list(WAYPOINTS.get(env, ()))
        if env in TARGETS:
            targets = [*targets, TARGETS[env]]
        rows = [*args.rows, *(r for r in EXTRA_ROWS if (Path(args.out) / env / r).is_dir())]
        stored = {row: _runs(Path(args.out) / env / row, args.seeds) for row in dict.fromkeys(rows)}
        budgets = [meta["budget"] for runs in stored.values() for meta, _ in runs]
        # Every row is read at the same steps: fractions of the smallest budget of the env's
        # rows (pong's pufferlib4 row trains 4.0's 5M, its pufferlib3 row the shipped 12M).
        budget = min(budgets, default=0)
        lines.append(
            f"| env | row | seeds | score at 25 % of {_steps(budget)} | 50 % | 100 % | "
            "end of its own budget | training time | "
            + "".join(f"to {t:g}{_theirs(env, t)} | " for t in targets)
            + "steps/s | machine, date |"
        )
        lines.append("|---" * (10 + len(targets)) + "|")
        at: dict[str, list[list[float]]] = {}
        for row, runs in stored.items():
            if not runs:
                lines.append(f"| {env} | {row} | | not run |" + " |" * (6 + len(targets)))
                continue
            at[row] = [
                [s for _, curve in runs if (s := score_at(curve, fraction * budget)) is not None]
                for fraction in FRACTIONS
            ]
            cells = [mean_sd(scores) for scores in at[row]]
            own = min(meta["budget"] for meta, _ in runs)
            ends = [s for _, c in runs if (s := score_at(c, own)) is not None]
            # Each seed's end too: a mean hides one seed of three stuck where the others solve.
            each = ", ".join(mean_sd([x]).removesuffix(" (1 seed)") for x in ends)
            stopped = sorted({meta["stopped_of"] for meta, _ in runs if "stopped_of" in meta})
            notes = [each] if each else []
            notes += [f"stopped short of its {_steps(whole)}" for whole in stopped]
            cells.append(
                f"{mean_sd(ends)} at {_steps(own)}" + (f" ({', '.join(notes)})" * bool(notes))
            )
            cells.append(_minutes([training_seconds(curve) for _, curve in runs]))
            cells.extend(_to_target([curve for _, curve in runs], target) for target in targets)
            sps = statistics.median(p["sps"] for _, curve in runs for p in curve)
            where = machines([meta for meta, _ in runs])
            seeds = ", ".join(str(m["seed"]) for m, _ in runs)
            lines.append(
                f"| {env} | {row} | {seeds} | {' | '.join(cells)} | {sps / 1e3:.0f}k | {where} |"
            )
        # The first stored row against each other one, each on its own line.
        names = list(at)
        pairs = [(names[0], name) for name in names[1:]]
        pairs += [(a, b) for a, b in ALSO_COMPARED if a in at and b in at]
        if env in MASKED_ENVS:
            pairs = [(a, b) for a, b in pairs if (a in UNMASKED_ROWS) == (b in UNMASKED_ROWS)]
        for first, other in pairs:
            verdicts = [verdict(a, b) for a, b in zip(at[first], at[other], strict=True)]
            lines.append("")
            lines.append(
                f"{env}, {first} against {other} at 25 / 50 / 100 %: " + "; ".join(verdicts)
            )
        lines.append(
            ""
        )  # a blank line ends the env's markdown table (or its verdict) before the next
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _theirs(env: str, target: float) -> str:
    """' (5.0: N steps)' after PufferLib 5.0's published score where its steps are known."""
    if TARGETS.get(env) == target and env in TARGET_STEPS:
        return f" (5.0: {TARGET_STEPS[env]} steps)"
    return ""


def _runs(folder: Path, seeds: list[int]) -> list[tuple[dict, list[dict]]]:
    """The stored (meta, curve) of each of `seeds` that has a curve file in `folder`."""
    paths = [folder / f"seed{s}.jsonl" for s in seeds]
    return [load(p) for p in paths if p.exists()]


def _steps(steps: float) -> str:
    """A step count as the table writes it: 99.8k, 5M, 13.3M."""
    if steps < 1e6:
        return f"{steps / 1e3:.3g}k"
    return f"{steps / 1e6:.3g}M"


def _minutes(seconds: list[float]) -> str:
    """Each seed's minutes."""
    return ", ".join(f"{s / 60:.1f}" for s in seconds) + " min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", help="Ocean env names with a pufferlib4_ENV.toml")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rows", nargs="+", choices=ROWS + EXTRA_ROWS, default=list(ROWS))
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--device", default="cpu", help="train.device of every row: cpu, cuda")
    parser.add_argument("--out", default=str(HERE / "results" / "pufferlib4"))
    parser.add_argument(
        "--pufferlib", metavar="DIR",
        help="PufferLib 3.0's venv (shared/anchors/pl3/setup.sh), for the pl3 row",
    )  # fmt: skip
    parser.add_argument(
        "--targets", type=float, nargs="+",
        help="scores to time (default: WAYPOINTS' for the env, then PufferLib 5.0's score)",
    )  # fmt: skip
    parser.add_argument(
        "--pl3-stop-at",
        type=int,
        metavar="STEPS",
        help="stop PufferLib 3.0's trainer once it has logged STEPS steps, its schedule still "
        "its whole budget's (for a budget that does not fit a sitting: snake.ini's 500M)",
    )
    parser.add_argument("--report", action="store_true", help="print the table only")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    parser.add_argument("--import", dest="imported", metavar="RUN_DIR", help="store this run")
    parser.add_argument("--seed", type=int, help="the imported run's seed")
    parser.add_argument(
        "--row", choices=ROWS + EXTRA_ROWS, default="pufferlib4", help="the imported run's row"
    )
    args = parser.parse_args()
    if args.imported:
        (env,) = args.envs
        run_dir = Path(args.imported)
        curve = curve_of(run_dir / "metrics.jsonl")
        meta = record(
            "pufferlib4_learn", env=env, row=args.row, seed=args.seed,
            budget=budget_of(curve, run_dir / "config.json"), threads=args.threads,
        )  # fmt: skip
        store(Path(args.out) / env / args.row / f"seed{args.seed}.jsonl", meta, curve)
    elif not args.report:
        for env in args.envs:
            for seed in args.seeds:
                for row in args.rows:
                    path = Path(args.out) / env / row / f"seed{seed}.jsonl"
                    if path.exists():
                        continue
                    load_before = os.getloadavg()[0]
                    whole = None
                    if row == "pl3":
                        curve, whole = run_pl3(args, env, seed, path)
                    else:
                        curve = run_ours(env, seed, args.threads, flags(env, row), args.device)
                    meta = record(
                        "pufferlib4_learn", env=env, row=row, seed=seed,
                        budget=curve[-1]["step"], threads=args.threads,
                        load=[load_before, os.getloadavg()[0]], device=args.device,
                    )  # fmt: skip
                    if whole is not None and curve[-1]["step"] < whole:
                        meta["stopped_of"] = whole  # the budget its schedule ran to
                    name_the_gpu(meta, args.device)
                    store(path, meta, curve)
                    print(f"{env} {row} seed {seed}: {curve[-1].get('score')}", flush=True)
    lines = report(args)
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "pufferlib4_learn", lines)


if __name__ == "__main__":
    main()
