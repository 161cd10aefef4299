"""`puffer eval ENV`: run a checkpoint in a window, or write a video headless; print scores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import torch
import typer

from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    console,
    reported_errors,
    resolve_config,
)
from puffer.cli.rollout import find_checkpoint, load_policy, one_instance, play
from puffer.cli.video import FrameSink, VideoWriter, Window, check_frame, has_display
from puffer.core import env_creator
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player
from puffer.train.paths import RunPaths

__all__ = ["evaluate", "register"]


def evaluate(
    ctx: typer.Context,
    env: str = typer.Argument(..., help="Env name, e.g. breakout."),
    config: Path | None = CONFIG_OPTION,
    load_model_path: str = typer.Option(
        "latest",
        "--load-model-path",
        help="A checkpoint.pt, its run directory, or 'latest' (newest run of ENV).",
    ),
    video: Annotated[
        Path | None,
        typer.Option(
            "--video", help="Write frames to this .gif or .mp4 instead of opening a window."
        ),
    ] = None,
    episodes: int = typer.Option(
        1, "--episodes", min=1, help="Episodes to play; their mean score and return are printed."
    ),
    max_steps: int = typer.Option(
        10_000, "--max-steps", min=1, help="Stop after this many steps whatever happens."
    ),
    fps: int = typer.Option(30, "--fps", min=1, help="Frames per second of the window/video."),
    render: bool = typer.Option(
        True, "--render/--no-render", help="Render frames (--no-render only prints scores)."
    ),
    opponent: str | None = typer.Option(
        None,
        "--opponent",
        help="Two-player turn-based games: play --games games against 'random' (legal "
        "moves), 'one-ply' (win, else block) or another checkpoint (a path); prints "
        "wins/draws/losses. The policy plays greedily and moves first in every other game.",
    ),
    games: int = typer.Option(100, "--games", min=1, help="Games to play with --opponent."),
) -> None:
    """Evaluate a trained policy on one instance of ENV.

    With a display it opens a pygame window; without one, or with --video, it writes the
    frames to a file (default: eval.gif in the checkpoint's run directory) instead. With
    --opponent it plays a two-player turn-based game against that opponent instead.
    """
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args)
        checkpoint = find_checkpoint(load_model_path, resolved.train.data_dir, env)
        creator = env_creator(env)
        if opponent is not None:
            _match(creator, env, resolved, checkpoint, opponent, games)
            return
        instance = one_instance(creator, resolved.env)
        # A batch of one row gains nothing from intra-op threads, and on a busy machine their
        # barriers wait for a time slice (milliseconds per op) whenever a core is taken.
        torch.set_num_threads(1)
        sink: FrameSink | None = None
        try:
            policy = load_policy(checkpoint, instance)
            console.print(f"evaluating {checkpoint}")
            if render:
                if video is None and not has_display():
                    # Beside the checkpoint it shows: <run>/eval.gif.
                    video = checkpoint.parent / RunPaths.VIDEO
                    console.print(f"no display: writing the frames to {video} instead")
                sink = VideoWriter(video, fps) if video is not None else Window(env, fps)

            def on_frame() -> bool:
                return sink.add(check_frame(instance.render(), env))  # type: ignore[union-attr]

            stats = play(
                instance,
                policy,
                on_frame if sink is not None else None,
                episodes=episodes,
                max_steps=max_steps,
                seed=resolved.train.seed,
            )
        finally:
            if sink is not None:
                sink.close()
            instance.close()
    if stats.returns:
        means = stats.means()
        console.print(f"{len(stats.returns)} episodes: " + ", ".join(_fmt(means)))
        if len(stats.returns) < episodes:
            console.print(
                f"stopped at --max-steps {max_steps} before {episodes} episodes ended; "
                "raise --max-steps for more"
            )
    else:
        console.print(f"no episode finished (stopped or --max-steps {max_steps} reached)")
    if isinstance(sink, VideoWriter):
        console.print(f"video: {sink.path} ({len(sink.frames)} frames)")


def _match(creator, env: str, run, checkpoint: Path, opponent: str, games: int) -> None:
    """Play `games` games of the checkpoint's policy against `opponent`; print the tally."""
    instance = creator(**run.env)
    torch.set_num_threads(1)
    try:
        learner = policy_player(load_policy(checkpoint, instance))
        seed = run.train.seed
        if opponent == "random":
            other = random_player(seed)
        elif opponent == "one-ply":
            other = one_ply_player(seed)
        else:
            other_checkpoint = find_checkpoint(opponent, run.train.data_dir, env)
            other = policy_player(load_policy(other_checkpoint, instance))
        result = play_games(instance, learner, other, games)
    finally:
        instance.close()
    rates = result.as_dict()
    console.print(
        f"{checkpoint} vs {opponent}: {result.games} games, {result.wins} wins, "
        f"{result.draws} draws, {result.losses} losses (win rate {rates['win_rate']:.3f}, "
        f"non-loss rate {rates['non_loss_rate']:.3f})"
    )


def _fmt(means: dict[str, float]) -> list[str]:
    return [f"{name} {value:.4g}" for name, value in means.items()]


def register(app: typer.Typer) -> None:
    """Add `eval` to `app`."""
    app.command("eval", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(evaluate)
