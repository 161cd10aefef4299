"""`puffer eval ENV`: run a checkpoint in a window, or write a video headless; print scores."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import torch
import typer

from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    TRUST_CHECKPOINT_OPTION,
    console,
    ours_for_a_pufferlib_name,
    reported_errors,
    resolve_config,
)
from puffer.core import env_creator
from puffer.train import Config, evaluate_episodes
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player
from puffer.train.checkpoint import find_checkpoint, load_policy, load_run_config
from puffer.train.evaluate import episode_count, episode_means, one_instance
from puffer.train.paths import RunPaths
from puffer.train.progress import Ticker, counted, duration
from puffer.train.score import scored_stat
from puffer.view import FrameSink, VideoWriter, Window, check_frame, has_display

__all__ = ["evaluate", "register"]


def evaluate(
    ctx: typer.Context,
    env: str = typer.Argument(
        ..., help="Env name, e.g. breakout.", callback=ours_for_a_pufferlib_name
    ),
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
    progress: float = typer.Option(
        5.0,
        "--progress",
        min=0,
        help="Seconds between progress lines (steps, episodes, mean score so far); 0: none.",
    ),
    trust_checkpoint: bool = TRUST_CHECKPOINT_OPTION,
) -> None:
    """Evaluate a trained policy on one instance of ENV.

    With a display it opens a pygame window; without one, or with --video, it writes the
    frames to a file (default: eval.gif in the checkpoint's run directory) instead; a video
    written elsewhere is also kept as the run's eval.gif (and logged to the run's wandb run
    when it had one), so the dashboard shows it. With --opponent it plays a two-player
    turn-based game against that opponent instead.
    """
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args)
        checkpoint = find_checkpoint(load_model_path, resolved.train.data_dir, env)
        creator = env_creator(env)
        trust = {"trusted_encoder": resolved.policy.encoder, "trust": trust_checkpoint}
        if opponent is not None:
            _match(creator, env, resolved, checkpoint, opponent, games, trust)
            return
        instance = one_instance(env, resolved.env_kwargs())
        # A batch of one row gains nothing from intra-op threads, and on a busy machine their
        # barriers wait for a time slice (milliseconds per op) whenever a core is taken.
        torch.set_num_threads(1)
        sink: FrameSink | None = None
        # The run's own copy of the video, which the dashboard shows.
        run_video = checkpoint.parent / RunPaths.VIDEO
        trained = load_run_config(checkpoint)
        try:
            policy = load_policy(checkpoint, instance, **trust)
            console.print(f"evaluating {checkpoint}")
            if render:
                if video is None and not has_display():
                    video = run_video
                    console.print(f"no display: writing the frames to {video} instead")
                sink = (
                    VideoWriter(video, fps, copies=(run_video,))
                    if video is not None
                    else Window(env, fps)
                )

            ticker = Ticker(progress) if progress else None
            steps = -1  # on_step is called once after the reset, then after every step

            def on_step(so_far: list[dict[str, float]]) -> bool:
                nonlocal steps
                steps += 1
                if ticker is not None and ticker.due() and steps > 1:
                    done = episode_count(so_far)
                    console.print(
                        f"[{duration(ticker.elapsed)}] step {steps:,} of at most "
                        f"{max_steps:,}, {done}/{episodes} episodes"
                        + (f"; {_scored(so_far, trained)}" if done else ""),
                        markup=False,
                    )
                return sink is None or sink.add(check_frame(instance.render(), env))

            stats = evaluate_episodes(
                policy,
                instance,
                episodes,
                seed=resolved.train.seed,
                # Counted in agent steps: each step of the instance steps all its rows.
                max_steps=max_steps * instance.num_agents,
                on_step=on_step,
            )
        finally:
            if sink is not None:
                sink.close()
            instance.close()
    finished = episode_count(stats)
    if finished:
        console.print(f"{counted(finished, 'episode')}: {_scored(stats, trained)}", markup=False)
        if finished < episodes:
            console.print(
                f"stopped at --max-steps {max_steps} before {counted(episodes, 'episode')} ended; "
                "raise --max-steps for more"
            )
    else:
        console.print(f"no episode finished (stopped or --max-steps {max_steps} reached)")
    if isinstance(sink, VideoWriter) and sink.frames:
        kept = f"; the run's copy: {run_video}" if sink.copies else ""
        console.print(f"video: {sink.path} ({len(sink.frames)} frames){kept}")
        if trained.train.wandb:
            _log_to_wandb(trained, env, checkpoint.parent, sink)


def _match(
    creator, env: str, run, checkpoint: Path, opponent: str, games: int, trust: dict
) -> None:
    """Play `games` games of the checkpoint's policy against `opponent`; print the tally."""
    instance = creator(**run.env_kwargs())
    torch.set_num_threads(1)
    try:
        learner = policy_player(load_policy(checkpoint, instance, **trust))
        seed = run.train.seed
        if opponent == "random":
            other = random_player(seed)
        elif opponent == "one-ply":
            other = one_ply_player(seed)
        else:
            other_checkpoint = find_checkpoint(opponent, run.train.data_dir, env)
            other = policy_player(load_policy(other_checkpoint, instance, **trust))
        result = play_games(instance, learner, other, games)
    finally:
        instance.close()
    rates = result.as_dict()
    console.print(
        f"{checkpoint} vs {opponent}: {result.games} games, {result.wins} wins, "
        f"{result.draws} draws, {result.losses} losses (win rate {rates['win_rate']:.3f}, "
        f"non-loss rate {rates['non_loss_rate']:.3f})"
    )


def _scored(stats: list[dict[str, float]], trained: Config) -> str:
    """`score 12.5 (episode_return); episode_length 200`: the mean per episode of the statistic
    the run is scored by (its `train.score_stat`), then every other statistic once."""
    means = episode_means(stats)
    stat = scored_stat(trained.train.score_stat, means)
    others = ", ".join(f"{k} {v:.4g}" for k, v in means.items() if k != stat)
    return f"score {means.get(stat, math.nan):.4g} ({stat})" + (f"; {others}" if others else "")


def _log_to_wandb(trained: Config, env: str, run_dir: Path, sink: VideoWriter) -> None:
    """Attach the video to the run's wandb run (it logged to wandb while training)."""
    from puffer.train.wandb_sink import WandbSink

    wandb_run = WandbSink(trained, env, run_dir)
    try:
        wandb_run.log_video(sink.path, sink.fps)
    finally:
        wandb_run.close()
    console.print(f"video logged to the run's wandb run ({trained.train.wandb_project})")


def register(app: typer.Typer) -> None:
    """Add `eval` to `app`."""
    app.command("eval", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(evaluate)
