"""Procgen learning on the CPU against random play: `benchmarks/configs/procgen_cpu.toml`
(the shipped procgen.toml made cheaper per step; the file says what differs) per seed.

Each run's curve (steps, score, steps/s, loss statistics; the first line its machine, date,
torch threads and the 1-minute load average before and after it) is stored as
`--out/GAME/seedS.jsonl`, by default under `benchmarks/results/procgen/`; random play's
returns (`benchmarks/procgen_random.py`) as `--out/random/GAME.json`. `--report` prints the
table from those files and `--write` puts it into docs/results/envs.md (between its
`procgen_learn` markers). The table gives, per game, random play's mean ± sd over its episodes
(and the standard error of that mean), then the trained runs' score (the mean return of the
episodes that ended in the last logged iteration at or before the point) at 250k, 500k and 1M
steps and at the end: mean ± sd over the seeds, each seed's figure, and the gap to random in
units of the seeds' sd and random's standard error together.

A run made by hand (several seeds at once, say) is stored with `--import RUN_DIR`:

    uv run puffer train procgen-starpilot --config benchmarks/configs/procgen_cpu.toml \\
        --no-dashboard --train.seed 0 --train.torch-threads 1 --train.data-dir DIR
    uv run python benchmarks/procgen_learn.py starpilot --import DIR/procgen-starpilot/RUN \\
        --seed 0 --threads 1 --load 7.0 10.4 6.1
    uv run python benchmarks/procgen_learn.py starpilot --report --write
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from ocean_learn import load, score_at
from pufferlib4_learn import _steps, budget_of, curve_of, store
from results_page import PAGES, machines, write_table

from puffer.cli.bench import record

HERE = Path(__file__).parent
OUT = HERE / "results" / "procgen"
CONFIG = HERE / "configs" / "procgen_cpu.toml"
PAGE = PAGES / "envs.md"  # its table sits between the `procgen_learn` markers there
# The steps each run's score is read at, then the end of its budget.
POINTS = (250_000, 500_000, 1_000_000)


def random_play(out: Path, game: str) -> list[float] | None:
    """Random play's stored episode returns for `game`, None when none are stored."""
    path = out / "random" / f"{game}.json"
    if not path.is_file():
        return None
    returns = json.loads(path.read_text())["returns"]
    if not isinstance(returns, list) or not all(isinstance(x, int | float) for x in returns):
        raise SystemExit(f"{path}: 'returns' is not a list of numbers; rerun procgen_random.py")
    return [float(x) for x in returns]


def report(args: argparse.Namespace) -> list[str]:
    """The table of the stored runs: one line per game (its runs, or 'not run')."""
    out = Path(args.out)
    lines = [
        "| game | random play (episodes) | seeds | "
        + " | ".join(f"score at {_steps(p)}" for p in POINTS)
        + " | end (each seed) | gap to random at the end | steps/s | machine, date |",
        "|---" * (7 + len(POINTS)) + "|",
    ]
    for game in args.games:
        returns = random_play(out, game)
        if returns is None:
            base, mean, stderr = "not measured", math.nan, math.nan
        else:
            mean, sd = statistics.mean(returns), statistics.stdev(returns)
            stderr = sd / math.sqrt(len(returns))
            base = f"{mean:.3f} ± {sd:.3f}, mean's s.e. {stderr:.3f} ({len(returns):,})"
        runs = [load(p) for s in args.seeds if (p := out / game / f"seed{s}.jsonl").is_file()]
        if not runs:
            lines.append(f"| {game} | {base} | | not run |" + " |" * (3 + len(POINTS)))
            continue
        cells = [_mean_sd([score_at(c, p) for _, c in runs]) for p in POINTS]
        ends = [c[-1].get("score") for _, c in runs]
        steps = [c[-1]["step"] for _, c in runs]
        each = ", ".join("-" if s is None else f"{s:.2f}" for s in ends)
        cells.append(f"{_mean_sd(ends)} at {_steps(min(steps))} ({each})")
        cells.append(_gap([s for s in ends if s is not None], mean, stderr))
        sps = statistics.median(p["sps"] for _, c in runs for p in c)
        seeds = ", ".join(str(m["seed"]) for m, _ in runs)
        where = machines([m for m, _ in runs])
        lines.append(f"| {game} | {base} | {seeds} | {' | '.join(cells)} | {sps:,.0f} | {where} |")
    return lines


def _mean_sd(scores: list[float | None]) -> str:
    """`mean ± sd` of the seeds that have a score there ('-' where none has)."""
    found = [s for s in scores if s is not None]
    if not found:
        return "-"
    if len(found) == 1:
        return f"{found[0]:.2f} (1 seed)"
    return f"{statistics.mean(found):.2f} ± {statistics.stdev(found):.2f}"


def _gap(ends: list[float], mean: float, stderr: float) -> str:
    """How far the seeds' mean end score is above random play's mean, in units of the two
    means' combined uncertainty (the seeds' standard error and random's); '-' without both."""
    if len(ends) < 2 or not math.isfinite(mean):
        return "-"
    spread = math.hypot(statistics.stdev(ends) / math.sqrt(len(ends)), stderr)
    return (
        f"{statistics.mean(ends) - mean:+.2f} ({(statistics.mean(ends) - mean) / spread:.1f} s.e.)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+", help="Procgen games (starpilot, bigfish, ...)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--report", action="store_true", help="print the table only")
    parser.add_argument("--write", action="store_true", help=f"also write the table into {PAGE}")
    parser.add_argument("--import", dest="imported", metavar="RUN_DIR", help="store this run")
    parser.add_argument("--seed", type=int, help="the imported run's seed")
    parser.add_argument("--threads", type=int, default=1, help="the imported run's torch threads")
    parser.add_argument(
        "--load", type=float, nargs="+", metavar="LOAD",
        help="the 1-minute load averages read before, during and after the imported run",
    )  # fmt: skip
    args = parser.parse_args()
    if args.imported:
        (game,) = args.games
        if args.seed is None:
            raise SystemExit("--import needs --seed (the run's train.seed)")
        run_dir = Path(args.imported)
        # The run's scored statistic (Procgen's episode return) and the episodes it averages.
        curve = curve_of(
            run_dir / "metrics.jsonl", "performance/score", "performance/score_episodes"
        )
        meta = record(
            "procgen_learn", game=game, seed=args.seed, config=CONFIG.name,
            budget=budget_of(curve, run_dir / "config.json"), threads=args.threads,
            **({"load": args.load} if args.load else {}),
        )  # fmt: skip
        store(Path(args.out) / game / f"seed{args.seed}.jsonl", meta, curve)
    lines = report(args)
    print("\n".join(lines))
    if args.write:
        write_table(PAGE, "procgen_learn", lines)


if __name__ == "__main__":
    main()
