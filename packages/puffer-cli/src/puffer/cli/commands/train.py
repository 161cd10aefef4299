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
    PROGRESS_OPTION,
    TENSORBOARD_OPTION,
    WANDB_OPTION,
    console,
    logging_overrides,
    ours_for_a_pufferlib_name,
    reported_errors,
    resolve_config,
)
from puffer.train import train as run_training
from puffer.train.config import parse_overrides
from puffer.train.paths import RunPaths
from puffer.train.progress import counted
from puffer.train.run import TrainingInterrupted, TrainResult
from puffer.train.runtime import resolve_device, torch_threads

__all__ = ["register", "resume_command", "score_words", "train"]


def train(
    ctx: typer.Context,
    env: str = typer.Argument(
        ..., help="Env name, e.g. breakout or gym-CartPole-v1.", callback=ours_for_a_pufferlib_name
    ),
    config: Path | None = CONFIG_OPTION,
    dashboard: bool = typer.Option(
        True,
        "--dashboard/--no-dashboard",
        help="Show the live terminal dashboard (on a terminal; elsewhere, or with "
        "--no-dashboard, progress lines).",
    ),
    progress: float = PROGRESS_OPTION,
    tensorboard: bool = TENSORBOARD_OPTION,
    wandb: bool = WANDB_OPTION,
) -> None:
    """Train a policy on ENV; the run directory holds the config, metrics and checkpoint.

    On a terminal a live dashboard shows the run; with output to a file or a pipe (nohup,
    Slurm, CI), or with --no-dashboard, a plain line every --progress seconds does. Ctrl-C (or
    SIGTERM) stops at the end of the current iteration, checkpoints it and prints the command that
    resumes the run; a second Ctrl-C quits at once.
    """
    # Under torchrun every rank runs this command; only rank 0 talks and writes files.
    main_rank = int(os.environ.get("RANK", "0")) == 0
    with reported_errors():
        args = [*ctx.args, *logging_overrides(tensorboard, wandb)]
        resolved = resolve_config(env, config, args, host=True)
        device = resolve_device(resolved.train.device)
        if main_rank:
            threads = torch_threads(resolved)
            where = f"{device} ({threads} torch thread{'s' * (threads > 1)})"
            console.print(
                f"training [bold]{env}[/bold] on {where} for {resolved.train.total_timesteps:,} steps"
            )
        live = dashboard and console.is_terminal
        lines = None if live or progress == 0 else progress
        try:
            result = run_training(
                env,
                resolved,
                dashboard=live,
                progress=lines,
                notify=lambda line: console.print(f"note: {line}", markup=False),
            )
        except TrainingInterrupted as stopped:
            if stopped.paths is not None and main_rank:
                console.print(
                    f"\nstopped by {signal.Signals(stopped.signum).name} at step "
                    f"{stopped.global_step:,}; checkpoint: {stopped.paths.checkpoint}",
                    markup=False,
                )
                console.print(
                    f"resume it: {resume_command(env, config, args, stopped.paths)}",
                    markup=False,
                )
            raise typer.Exit(128 + stopped.signum) from None
        except KeyboardInterrupt:
            # Before the first iteration, or a second Ctrl-C: the last checkpoint written stays.
            where = RunPaths.env_dir(resolved.train.data_dir, env)
            console.print(f"\ninterrupted; the checkpoints of {env} runs are under {where}/")
            raise typer.Exit(130) from None
    if result.run_dir is None or not main_rank:
        return
    paths = RunPaths(resolved.train.data_dir, env, result.run_dir.name)
    console.print(
        f"done: {result.global_step:,} steps in {counted(result.iterations, 'iteration')}; "
        f"{score_words(result)}",
        markup=False,
    )
    console.print(f"model: {paths.checkpoint}")
    console.print(f"evaluate it: puffer eval {env} --load-model-path {paths.root}")


def score_words(result: TrainResult) -> str:
    """`score 199 (episode_return over the last 104 episodes; episode_length 110, ...)`: the
    run's score (`puffer.train.score`) and the other statistics of the same episodes."""
    if not result.score_episodes:
        return "score - (no episode finished)"
    others = ", ".join(
        f"{k} {v:.3g}" for k, v in sorted(result.recent.items()) if k != result.score_stat
    )
    return (
        f"score {result.score:.4g} ({result.score_stat} over the last "
        f"{counted(result.score_episodes, 'episode')}{'; ' + others if others else ''})"
    )


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
