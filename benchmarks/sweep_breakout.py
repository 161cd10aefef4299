"""Breakout's least wall time to a solved game: the table of the `puffer sweep` behind it.

The sweep searches breakout's budget, learning rate, gamma, GAE lambda and entropy bonus
around the shipped breakout.toml (`benchmarks/configs/sweep_breakout.toml` says how and why),
with each run's wall time as its cost and its final score as its score. Its store (one
record a run: the suggestion, the final score, the wall time and the learning curve as
(steps, score, seconds since the run began) points) is committed as
`benchmarks/results/sweep/breakout_wall.jsonl`, so `--report` rebuilds the table from the
checkout and `--write` puts it into the root README, between its `sweep_breakout` markers.

Per run the table gives the suggestion, the final score, the run's wall time (start-up
included) and the steps and wall time at which its curve first reached each of `TARGETS`;
runs that reach the last target come first, the quickest first, then the rest by final score.

    uv run puffer sweep breakout --config benchmarks/configs/sweep_breakout.toml --name wall --train.torch-threads 1
    uv run python benchmarks/sweep_breakout.py --import experiments/breakout/sweep-wall/sweep.jsonl
    uv run python benchmarks/sweep_breakout.py --report --write
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from results_page import write_table

from puffer.sweep import RunRecord, SweepStore, SweepStoreError

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "benchmarks" / "results" / "sweep" / "breakout_wall.jsonl"
PAGE = ROOT / "README.md"  # the table sits between its `sweep_breakout` markers
# Scores timed on the way: half the game, and the acceptance bar of "solved" (of 864).
TARGETS = (400.0, 800.0)
# The searched parameters in the sweep's order (its store's header) as the table's columns,
# with their format.
COLUMNS = {
    "train.learning_rate": ("learning rate", lambda v: f"{v:.3g}"),
    "train.gamma": ("gamma", lambda v: f"{v:.4f}"),
    "train.gae_lambda": ("lambda", lambda v: f"{v:.3f}"),
    "train.ent_coef": ("ent_coef", lambda v: f"{v:.2g}"),
    "train.total_timesteps": ("budget", lambda v: f"{v / 1e6:.1f}M"),
}


def load_runs(store: Path) -> list[RunRecord]:
    """The store's runs, in the order they finished.

    Raises:
        SystemExit: `store` is missing or empty, or `SweepStore` refuses it (not a sweep's
            store, or one over other parameters than `COLUMNS`).
    """
    hint = "give the sweep.jsonl in its sweep folder, e.g. experiments/breakout/sweep-wall/"
    if not store.is_file() or store.stat().st_size == 0:
        raise SystemExit(f"{store} is not a puffer sweep store: {hint}")
    try:
        return SweepStore(store).open(list(COLUMNS))
    except SweepStoreError as error:
        message = f"{store} is not a puffer sweep store of this search ({error}): {hint}"
        raise SystemExit(message) from None


def first_reached(run: RunRecord, target: float) -> tuple[float, float] | None:
    """(steps, seconds) of the run's first curve point scoring at least `target`; None if none."""
    return next(((s, t) for s, score, t in run.curve if score >= target), None)


def _reached(run: RunRecord, target: float) -> str:
    hit = first_reached(run, target)
    return "not reached" if hit is None else f"{hit[0] / 1e6:.1f}M steps, {hit[1] / 60:.1f} min"


def report(store: Path) -> list[str]:
    """The markdown table of the sweep in `store`."""
    runs = [run for run in load_runs(store) if not run.failed]

    def order(run: RunRecord) -> tuple:
        hit = first_reached(run, TARGETS[-1])
        return (0, hit[1]) if hit is not None else (1, -(run.score or 0.0))

    heads = [COLUMNS[name][0] for name in COLUMNS]
    reached = [f"{target:g} first at" for target in TARGETS]
    lines = [
        "| run | " + " | ".join(heads) + " | final score | wall | " + " | ".join(reached) + " |",
        "|" + "---|" * (len(heads) + 3 + len(reached)),
    ]
    for run in sorted(runs, key=order):
        values = [fmt(run.params[name]) for name, (_, fmt) in COLUMNS.items()]
        times = [_reached(run, target) for target in TARGETS]
        lines.append(
            f"| {run.run_id} | " + " | ".join(values) + f" | {run.score:.1f} | "
            f"{run.cost / 60:.1f} min | " + " | ".join(times) + " |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--store", type=Path, default=STORE, help="the sweep's committed store")
    parser.add_argument("--import", dest="imported", type=Path, help="copy this sweep.jsonl in")
    parser.add_argument("--report", action="store_true", help="print the table")
    parser.add_argument("--write", action="store_true", help=f"also write it into {PAGE}")
    args = parser.parse_args()
    if args.imported is not None:
        # Checked as a copy: SweepStore trims a cut-short last line, which must not touch the
        # file given, nor the committed store if the file is refused.
        args.store.parent.mkdir(parents=True, exist_ok=True)
        copy = args.store.with_suffix(".importing")
        shutil.copyfile(args.imported, copy)
        try:
            load_runs(copy)
        except SystemExit:
            copy.unlink()
            raise
        copy.replace(args.store)
        print(f"stored {args.imported} as {args.store}")
    table = report(args.store)
    print("\n".join(table))
    if args.write:
        write_table(PAGE, "sweep_breakout", table)


if __name__ == "__main__":
    main()
