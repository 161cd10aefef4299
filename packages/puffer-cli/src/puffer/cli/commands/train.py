"""`puffer train ENV`: train with PuffeRL from the env's config, with the live dashboard."""

from __future__ import annotations

import os
import shlex
import signal
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
from puffer.train.config import parse_overrides
from puffer.train.paths import RunPaths
from puffer.train.pufferl import resolve_device, torch_threads
from puffer.train.run import TrainingInterrupted

__all__ = ["register", "resume_command", "train"]

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
    """Train a policy on ENV; the run directory holds the config, metrics and checkpoint.

    Ctrl-C (or SIGTERM) stops at the end of the current epoch, checkpoints it and prints the
    command that resumes the run; a second Ctrl-C quits at once.
    """
    # Under torchrun every rank runs this command; only rank 0 talks and writes files.
    main_rank = int(os.environ.get("RANK", "0")) == 0
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args, host=True)
        device = resolve_device(resolved.train.device)
        if main_rank:
            threads = torch_threads(resolved)
            where = f"{device} ({threads} torch thread{'s' * (threads > 1)})"
            console.print(
                f"training [bold]{env}[/bold] on {where} for {resolved.train.total_timesteps:,} steps"
            )
        try:
            result = run_training(env, resolved, dashboard=dashboard, wandb=wandb)
        except TrainingInterrupted as stopped:
            if dashboard and not console.is_terminal:
                console.line()
            if stopped.paths is not None and main_rank:
                stopped.paths.config_toml.write_text(resolved.to_toml())
                console.print(
                    f"\nstopped by {signal.Signals(stopped.signum).name} at step "
                    f"{stopped.global_step:,}; checkpoint: {stopped.paths.checkpoint}",
                    markup=False,
                )
                console.print(
                    f"resume it: {resume_command(env, config, ctx.args, stopped.paths)}",
                    markup=False,
                )
            raise typer.Exit(128 + stopped.signum) from None
        except KeyboardInterrupt:
            # Before the first epoch, or a second Ctrl-C: the last checkpoint written stays.
            where = RunPaths.env_dir(resolved.train.data_dir, env)
            console.print(f"\ninterrupted; the checkpoints of {env} runs are under {where}/")
            raise typer.Exit(130) from None
    if result.run_dir is None or not main_rank:
        return
    paths = RunPaths(resolved.train.data_dir, env, resolved.train.run_id)
    # The resolved TOML beside the checkpoint reproduces the run: --config <run>/config.toml.
    paths.config_toml.write_text(resolved.to_toml())
    stats = ", ".join(
        f"{k} {v:.3g}" for k, v in sorted(result.recent.items()) if k != EPISODE_COUNT
    )
    if dashboard and not console.is_terminal:
        console.line()  # a dashboard drawn into a pipe or file ends mid-line
    console.print(
        f"done: {result.global_step:,} steps in {result.epochs} epochs"
        + (f"; last 100 episodes: {stats}" if stats else "")
    )
    console.print(f"model: {paths.checkpoint}")
    console.print(f"evaluate it: puffer eval {env} --load-model-path {paths.root}")


# The keys `resume_command` sets itself.
_RUN_KEYS = {("train", "data_dir"), ("train", "run_id"), ("train", "resume")}


def resume_command(env: str, config: Path | None, args: list[str], paths: RunPaths) -> str:
    """The command line that continues the run in `paths`: the same config layers and
    overrides, less any data dir, run id or resume the user gave, then the run's own."""
    words = ["puffer", "train", env]
    if config is not None:
        words += ["--config", str(config)]
    for override in parse_overrides(args):
        if override.path not in _RUN_KEYS:
            words.append(override.spelled)
            words += [] if override.value is None else [override.value]
    words += ["--train.data-dir", str(Path(paths.data_dir).resolve())]
    words += ["--train.run-id", paths.run_id, "--train.resume", "true"]
    return shlex.join(words)


def register(app: typer.Typer) -> None:
    """Add `train` to `app`."""
    app.command("train", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(train)
