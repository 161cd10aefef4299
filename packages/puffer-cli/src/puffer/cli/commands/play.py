"""`puffer play ENV`: a person plays an Ocean env with the keyboard in a pygame window."""

from __future__ import annotations

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
from puffer.core import APIUsageError, PufferEnv, env_creator
from puffer.train.checkpoint import find_checkpoint, load_policy
from puffer.train.evaluate import one_instance
from puffer.view import (
    KeyMap,
    Others,
    PlayWindow,
    PolicyOthers,
    RandomOthers,
    Score,
    VideoWriter,
    check_frame,
    has_display,
)

__all__ = ["play", "register"]


def play(
    ctx: typer.Context,
    env: str = typer.Argument(
        ..., help="Ocean env name, e.g. breakout.", callback=ours_for_a_pufferlib_name
    ),
    config: Path | None = CONFIG_OPTION,
    load_model_path: str | None = typer.Option(
        None,
        "--load-model-path",
        help="Multi-agent envs: a checkpoint.pt, its run directory or 'latest' plays the other "
        "agents; without it they act at random.",
    ),
    record: Annotated[
        Path | None, typer.Option("--record", help="Save the session as this .gif.")
    ] = None,
    fps: int = typer.Option(15, "--fps", min=1, max=240, help="Frames (real-time steps) per s."),
    scale: int = typer.Option(0, "--scale", min=0, help="Window zoom; 0 picks one."),
    max_steps: int = typer.Option(0, "--max-steps", min=0, help="Stop after N steps; 0: never."),
    seed: int = typer.Option(0, "--seed", help="Reset seed."),
    trust_checkpoint: bool = TRUST_CHECKPOINT_OPTION,
) -> None:
    """Play ENV with the keys its header declares; you are agent 0. Escape or q quits.

    Real-time envs (breakout, pong, ...) step every frame with the keys held; turn-based ones
    (2048, connect4, ...) step once per key press; board games name a move by a key sequence
    (go: "c 4" plays column c, row 4; "p" passes), and the step comes when it is complete.
    """
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args)
        creator = env_creator(env)
        spec = getattr(creator, "spec", None)
        if not isinstance(spec, dict) or "keys" not in spec:
            raise APIUsageError(
                f"{env} is not an Ocean C env, so it declares no keys; `puffer play` plays "
                "those (`puffer list` shows them under puffer-ocean)"
            )
        if not has_display():
            raise APIUsageError(
                f"puffer play {env}: no display (DISPLAY is unset); run it on a desktop, or "
                "under a virtual X server: xvfb-run puffer play ..."
            )
        instance = one_instance(env, resolved.env_kwargs())
        writer = VideoWriter(record, fps) if record is not None else None
        window = None
        try:
            keys = KeyMap(env, spec["keys"], instance.single_action_space)
            others: Others
            if load_model_path is not None:
                checkpoint = find_checkpoint(load_model_path, resolved.train.data_dir, env)
                torch.set_num_threads(1)  # one row per step: threads only wait on each other
                policy = load_policy(
                    checkpoint,
                    instance,
                    trusted_encoder=resolved.policy.encoder,
                    trust=trust_checkpoint,
                )
                others = PolicyOthers(instance, policy)
            else:
                others = RandomOthers(instance, seed)
            mode = "real time" if keys.realtime else "one step per key press"
            console.print(f"{env} ({mode}); keys: {keys.legend()}; Escape or q quits")
            window = PlayWindow(f"puffer play {env}", scale)
            score = _play(instance, keys, others, window, writer, fps, max_steps, seed)
        finally:
            if window is not None:
                window.close()
            if writer is not None:
                writer.close()
            instance.close()
    finished = ", ".join(f"{r:.3g}" for r in score.returns) or "none"
    console.print(
        f"played {score.step} steps; episode returns: {finished}; "
        f"return so far {score.episode_return:.3g}",
    )
    if writer is not None:
        console.print(f"recording: {writer.path} ({len(writer.frames)} frames)")


def _play(
    env: PufferEnv,
    keys: KeyMap,
    others: Others,
    window: PlayWindow,
    writer: VideoWriter | None,
    fps: int,
    max_steps: int,
    seed: int,
) -> Score:
    """The frame loop: read keys, step, draw (and record each drawn step)."""
    score = Score()
    others.reset(seed)
    frame = window.show(check_frame(env.render(), str(env)), score.line())
    if writer is not None:
        writer.add(frame)
    while not (max_steps and score.step >= max_steps):
        quit_asked, pressed = window.events()
        if quit_asked:
            break
        if keys.realtime:
            actions = [keys.action(window.held)]
        else:
            actions = [a for a in map(keys.press, pressed) if a is not None]
        for action in actions:
            score.update(env, others.act(action))
        line = score.line()
        if keys.pending:
            line += f"  keys: {keys.pending_text()}"
        frame = window.show(check_frame(env.render(), str(env)), line)
        if writer is not None and actions:
            writer.add(frame)
        window.tick(fps)
    return score


def register(app: typer.Typer) -> None:
    """Add `play` to `app`."""
    app.command("play", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(play)
