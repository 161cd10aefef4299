"""Ocean learning at PufferLib 4.0's configs: ours with PufferNet at each 4.0 config, beside
ours at PufferLib 3.0's config (the LSTM 128 that was breakout's shipped config), per seed.

Rows per env and seed:
- `pufferlib4`: `puffer train ENV --config benchmarks/configs/pufferlib4_ENV.toml`;
- `pufferlib3`: `puffer train ENV --config benchmarks/configs/pufferlib3_ENV.toml`, PufferLib
  3.0's config (breakout: the LSTM 128 that was its shipped TOML before PufferNet).

Each run's curve (steps, score, steps/s, loss statistics; the first line its machine and date)
is stored as `--out/ENV/ROW/seedS.jsonl`, by default under `benchmarks/results/pufferlib4/`, so
the table in the docs' results page (docs/results/ocean.md) rebuilds from the checkout
(`--report` prints it, `--write` puts it into the page). A run made by
hand (`puffer train ...`, e.g. beside other work) is stored with `--import RUN_DIR`. The table
gives mean ± sd over the seeds of the score at 25 %, 50 % and 100 % of the budget (the last
logged window at or before each point, the same steps for every row), each seed's training
time (the logged epochs' steps at their steps/s: no start-up), its training time to each of
`--targets` (breakout: 400, 800 and PufferLib 5.0's published 863.97) and the median steps/s.

    uv run python benchmarks/pufferlib4_learn.py breakout --seeds 0 1 2 --threads 1
    uv run python benchmarks/pufferlib4_learn.py breakout --import experiments/breakout/RUN --seed 0
    uv run python benchmarks/pufferlib4_learn.py breakout --seeds 0 1 2 --report --write
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from ocean_learn import LOSSES, load, run_ours, score_at, seconds_to
from results_page import PAGES, write_table

from puffer.cli.bench import record

HERE = Path(__file__).parent
PAGE = PAGES / "ocean.md"  # its table sits between the `pufferlib4_learn` markers there
ROWS = ("pufferlib4", "pufferlib3")
# PufferLib 5.0's published scores (its prerelease status page), the time-to-score targets.
TARGETS = {"breakout": 863.97, "pong": 21.0, "cartpole": 200.0, "connect4": 0.966}


def flags(env: str, row: str) -> list[str]:
    """`puffer train ENV` flags of a row: its config file in benchmarks/configs/."""
    path = HERE / "configs" / f"{row}_{env}.toml"
    if not path.exists():
        raise SystemExit(f"no {path.name} for the {row} row of {env}")
    return ["--config", str(path)]


def curve_of(metrics: Path) -> list[dict]:
    """A run's metrics.jsonl as curve rows (step, steps/s, score, loss statistics)."""
    curve = []
    for line in metrics.read_text().splitlines():
        row = json.loads(line)
        point = {"step": int(row["step"]), "sps": row["performance/sps"]}
        if "environment/score" in row:
            point["score"] = row["environment/score"]
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
    """A run's training time: each logged epoch's steps at its steps/s (no start-up)."""
    seconds, last = 0.0, 0
    for point in curve:
        seconds += (point["step"] - last) / point["sps"]
        last = point["step"]
    return seconds


def report(args: argparse.Namespace) -> list[str]:
    """The table of the stored runs: one header per env, one line per row."""
    lines = []
    for env in args.envs:
        targets = args.targets or [t for t in (400.0, 800.0) if env == "breakout"]
        if env in TARGETS:
            targets = [*targets, TARGETS[env]]
        lines.append(
            "| env | row | seeds | score at 25 % | 50 % | 100 % | training time | "
            + " | ".join(f"time to {t:g}" for t in targets)
            + " | steps/s | machine, date |"
        )
        lines.append("|---" * (9 + len(targets)) + "|")
        for row in args.rows:
            paths = [Path(args.out) / env / row / f"seed{s}.jsonl" for s in args.seeds]
            runs = [load(p) for p in paths if p.exists()]
            if not runs:
                lines.append(f"| {env} | {row} | | not run |" + " |" * (5 + len(targets)))
                continue
            budget = min(meta["budget"] for meta, _ in runs)
            cells = []
            for fraction in (0.25, 0.5, 1.0):
                scores = [score_at(curve, fraction * budget) for _, curve in runs]
                cells.append(_mean_sd([s for s in scores if s is not None]))
            cells.append(_minutes([training_seconds(curve) for _, curve in runs]))
            for target in targets:
                cells.append(_minutes([seconds_to(curve, target) for _, curve in runs]))
            sps = statistics.median(p["sps"] for _, curve in runs for p in curve)
            machines = "; ".join(sorted({f"{m['machine']}, {m['date']}" for m, _ in runs}))
            seeds = ", ".join(str(m["seed"]) for m, _ in runs)
            lines.append(
                f"| {env} | {row} | {seeds} | {' | '.join(cells)} | {sps / 1e3:.0f}k | {machines} |"
            )
    return lines


def _minutes(seconds: list[float | None]) -> str:
    """Each seed's minutes, 'never' where it did not get there."""
    return ", ".join("never" if s is None else f"{s / 60:.1f}" for s in seconds) + " min"


def _mean_sd(scores: list[float]) -> str:
    if not scores:
        return "-"
    if len(scores) == 1:
        return f"{scores[0]:.1f} (1 seed)"
    return f"{statistics.mean(scores):.1f} ± {statistics.stdev(scores):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+", help="Ocean env names with a pufferlib4_ENV.toml")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--out", default=str(HERE / "results" / "pufferlib4"))
    parser.add_argument(
        "--targets", type=float, nargs="+",
        help="scores to time (default: 400 and 800 for breakout, then PufferLib 5.0's score)",
    )  # fmt: skip
    parser.add_argument("--report", action="store_true", help="print the table only")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    parser.add_argument("--import", dest="imported", metavar="RUN_DIR", help="store this run")
    parser.add_argument("--seed", type=int, help="the imported run's seed")
    parser.add_argument("--row", choices=ROWS, default="pufferlib4", help="the imported run's row")
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
                    curve = run_ours(env, seed, args.threads, flags(env, row))
                    meta = record(
                        "pufferlib4_learn", env=env, row=row, seed=seed,
                        budget=curve[-1]["step"], threads=args.threads,
                    )  # fmt: skip
                    store(path, meta, curve)
                    print(f"{env} {row} seed {seed}: {curve[-1].get('score')}", flush=True)
    lines = report(args)
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "pufferlib4_learn", lines)


if __name__ == "__main__":
    main()
