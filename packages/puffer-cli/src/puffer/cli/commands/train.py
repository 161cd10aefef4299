"""`puffer train ENV`: train with PuffeRL from the env's config, with the live dashboard."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    console,
    reported_errors,
    resolve_config,
)
from puffer.train import train as run_training
from puffer.train.checkpoint import CHECKPOINT_NAME
from puffer.train.pufferl import resolve_device

__all__ = ["register", "train"]

RESOLVED_TOML = "config.toml"
# Ocean logs carry the number of episodes they average over; it is no statistic to show.
EPISODE_COUNT = "n"


def train(
    ctx: typer.Context,
    env: str = typer.Argument(..., help="Env name, e.g. breakout or gym-CartPole-v1."),
    config: Path | None = CONFIG_OPTION,
    dashboard: bool = typer.Option(
        True, "--dashboard/--no-dashboard", help="Show the live terminal dashboard."
    ),
    wandb: bool = typer.Option(False, "--wandb", help="Also log to wandb (the wandb extra)."),
) -> None:
    """Train a policy on ENV; the run directory holds the config, metrics and checkpoint."""
    # Under torchrun every rank runs this command; only rank 0 talks and writes files.
    main_rank = int(os.environ.get("RANK", "0")) == 0
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args, host=True)
        device = resolve_device(resolved.run.train.device)
        if main_rank:
            console.print(
                f"training [bold]{env}[/bold] on {device} for "
                f"{resolved.run.train.total_timesteps:,} steps"
            )
        try:
            result = run_training(env, resolved.run, dashboard=dashboard, wandb=wandb)
        except KeyboardInterrupt:
            where = Path(resolved.run.train.data_dir) / env.replace("/", "_")
            console.print(f"\ninterrupted; periodic checkpoints of this run are under {where}/")
            raise typer.Exit(130) from None
    if result.run_dir is None or not main_rank:
        return
    # The resolved TOML beside the checkpoint reproduces the run: --config <run>/config.toml.
    (result.run_dir / RESOLVED_TOML).write_text(resolved.to_toml())
    stats = ", ".join(
        f"{k} {v:.3g}" for k, v in sorted(result.recent.items()) if k != EPISODE_COUNT
    )
    if dashboard and not console.is_terminal:
        console.line()  # a dashboard drawn into a pipe or file ends mid-line
    console.print(
        f"done: {result.global_step:,} steps in {result.epochs} epochs"
        + (f"; last 100 episodes: {stats}" if stats else "")
    )
    console.print(f"model: {result.run_dir / CHECKPOINT_NAME}", soft_wrap=True)
    console.print(
        f"evaluate it: puffer eval {env} --load-model-path {result.run_dir}", soft_wrap=True
    )


def register(app: typer.Typer) -> None:
    """Add `train` to `app`."""
    app.command("train", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(train)
