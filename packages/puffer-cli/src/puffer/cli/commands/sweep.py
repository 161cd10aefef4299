"""`puffer sweep ENV`: puffer-sweep's ask/tell driver over puffer-train runs.

    [sweep] of the config -> parse_sweep_config -> run_sweep(objective, runner, store)
    objective(params) = train(ENV, config.with_params(params)) -> RunResult(score, curve)

A run's score is puffer-train's (`puffer.train.score`), the one its own dashboard shows.

Every finished run is appended to `<data_dir>/<env>/sweep-<name>/sweep.jsonl` (score, wall and
CPU seconds, agent steps, params, learning curve); running the same `--name` again resumes from
that file. `--sweep.cost wall|cpu|steps` says which of the three the search counts as cost.
"""

from __future__ import annotations

import functools
import math
import time
import uuid
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    PROGRESS_OPTION,
    TENSORBOARD_OPTION,
    WANDB_OPTION,
    console,
    logging_overrides,
    ours_for_a_pufferlib_name,
    reported_errors,
    resolve_config,
)
from puffer.core import slot_env
from puffer.sweep import (
    LocalRunner,
    RunResult,
    SerialRunner,
    SweepEvent,
    SweepHalted,
    SweepSummary,
    run_sweep,
)
from puffer.train import train as run_training
from puffer.train.config import Config
from puffer.train.paths import RunPaths, check_name
from puffer.train.score import SCORE
from puffer.train.storage import StorageError, atomic_write, check_inside, writing

__all__ = ["CurveSink", "register", "sweep", "train_objective"]

STORE_NAME = "sweep.jsonl"


class CurveSink:
    """A puffer-train metrics sink that keeps (steps, score, seconds) per iteration: the curve of
    the run's score (`puffer.train.score`), the one the sweep ranks runs by."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.points: list[tuple[float, float, float]] = []

    def log(self, metrics: dict[str, float], step: int) -> None:
        value = metrics.get(SCORE)
        if value is not None and math.isfinite(value):
            self.points.append((float(step), value, time.perf_counter() - self.start))

    def close(self) -> None:
        """Nothing to release."""


def train_objective(
    base: Config, runs_dir: str, progress: float | None, params: dict[str, float | int]
) -> RunResult:
    """Train one suggestion and score it (module-level, so process runners can pickle it).

    Args:
        base: The resolved config every run starts from.
        runs_dir: `train.data_dir` of the runs.
        progress: Seconds between each run's progress lines (None: none).
        params: The suggestion, dotted `section.key` names.

    Returns:
        The run's score (`puffer.train.score`: the mean of `train.score_stat` over its last
        iterations holding 100 episodes), its learning curve, and the run directory in `info`.

    Raises:
        ValueError: The env never reported the statistic (the sweep records a failed run).
        SweepHalted: A run file could not be written (the sweep stops, the run unrecorded).
    """
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    config = base.with_params({**params, "train.data_dir": runs_dir, "train.run_id": run_id})
    curve = CurveSink()
    try:
        result = run_training(
            base.env_name, config, sinks=[curve], progress=progress, progress_label=run_id
        )
    except StorageError as error:
        # A full disk says nothing of the params: stop, rather than fail every run left.
        raise SweepHalted(f"{error} (a sweep: the same --name goes on from its store)") from error
    if not math.isfinite(result.score):
        raise ValueError(
            f"no episode of {base.env_name} reported {result.score_stat!r}, the statistic "
            f"scored; it reports {sorted(result.recent)}; set --train.score-stat to one of them"
        )
    return RunResult(
        score=result.score,
        steps=float(result.global_step),
        curve=curve.points,
        info={"run_dir": str(result.run_dir), "global_step": result.global_step},
    )


def _on_event(event: SweepEvent) -> None:
    if event.kind == "resumed":
        console.print(f"resumed {event.num_finished} runs from the sweep store")
    elif event.kind == "finished" and event.record is not None:
        record = event.record
        outcome = (
            f"[red]failed[/red]: {escape(record.error.strip().splitlines()[-1])}"
            if record.failed
            else f"score {record.score:.4g}"
        )
        best = f"; best {event.best.score:.4g}" if event.best is not None else ""
        console.print(
            f"run {record.run_id} ({event.num_finished}/{event.max_runs}): {outcome}, "
            f"cost {record.cost:.1f}s{best}"
        )


def _print_summary(summary: SweepSummary, store: Path) -> None:
    table = Table(title="best runs by score")
    for column in ("run", "score", "cost (s)", "params"):
        table.add_column(column)
    for record in summary.best:
        params = ", ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"  # categoricals: any scalar
            for k, v in record.params.items()
        )
        table.add_row(str(record.run_id), f"{record.score:.4g}", f"{record.cost:.1f}", params)
    console.print(table)
    console.print(
        f"{len(summary.runs)} runs, {summary.num_failed} failed, total cost "
        f"{summary.total_cost:.1f}s; every run is in {store}",
    )


def sweep(
    ctx: typer.Context,
    env: str = typer.Argument(
        ..., help="Env name, e.g. cartpole.", callback=ours_for_a_pufferlib_name
    ),
    config: Path | None = CONFIG_OPTION,
    name: str = typer.Option(
        "", "--name", help="Sweep name; an existing name resumes that sweep. Default: a timestamp."
    ),
    slots: int = typer.Option(1, "--slots", min=1, help="Runs trained at once (processes)."),
    progress: float = PROGRESS_OPTION,
    tensorboard: bool = TENSORBOARD_OPTION,
    wandb: bool = WANDB_OPTION,
) -> None:
    """Search the hyperparameters in ENV's sweep section: train each suggestion, log it, rank them.

    Each run prints a progress line every --progress seconds, starting with its run id, and
    one line when it ends; the best runs are listed at the end.
    """
    with reported_errors():
        args = [*ctx.args, *logging_overrides(tensorboard, wandb)]
        resolved = resolve_config(env, config, args, host=True)
        sweep_config = resolved.sweep
        name = check_name("--name", name or time.strftime("%Y%m%d-%H%M%S"))
        sweep_dir = RunPaths.sweep_dir(resolved.train.data_dir, env, name)
        with writing(sweep_dir):
            sweep_dir.mkdir(parents=True, exist_ok=True)
        check_inside(sweep_dir, resolved.train.data_dir)
        text = resolved.to_toml().encode()
        atomic_write(sweep_dir / "config.toml", lambda file: file.write(text))
        store = sweep_dir / STORE_NAME
        console.print(
            f"sweeping {env}: {sweep_config.method} over {', '.join(sweep_config.space.names)}; "
            f"{sweep_config.max_runs} runs, {sweep_config.goal} the score "
            f"(train.score_stat {resolved.train.score_stat})"
        )
        objective = functools.partial(
            train_objective, resolved, str(sweep_dir / "runs"), progress or None
        )
        runner = SerialRunner() if slots == 1 else LocalRunner(slots, [slot_env(slots)] * slots)
        try:
            summary = run_sweep(
                objective, sweep_config, store=store, runner=runner, on_event=_on_event
            )
        finally:
            runner.close()
    _print_summary(summary, store)


def register(app: typer.Typer) -> None:
    """Add `sweep` to `app`."""
    app.command("sweep", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(sweep)
