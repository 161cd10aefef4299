"""`puffer bench ENV`: random-policy agent steps per second through the configured vectorizer."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

import typer

from puffer.cli.bench import header, timed
from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    console,
    ours_for_a_pufferlib_name,
    reported_errors,
    resolve_config,
)
from puffer.core import random_actions
from puffer.train.run import make_vecenv

__all__ = ["bench", "measure_sps", "register"]

# Pre-drawn action batches cycled through, so sampling does not count against the env.
ACTION_BATCHES = 16


def measure_sps(vecenv, seconds: float, repeats: int, seed: int) -> list[float]:
    """Agent steps per second of `vecenv` under uniformly random actions.

    Steps through the async API (`send`/`recv`), so EnvPool-style batches (batch_size <
    num_envs) are measured as the trainer sees them. One untimed warm-up window precedes the
    `repeats` timed windows of `seconds` each.

    Returns:
        One rate per timed window (agent rows stepped per second).
    """
    actions = random_actions(vecenv.single_action_space, vecenv.num_agents, ACTION_BATCHES, seed)
    steps = itertools.count()

    def step() -> int:
        agent_ids = vecenv.recv()[5]
        vecenv.send(actions[next(steps) % ACTION_BATCHES][: len(agent_ids)])
        return len(agent_ids)

    vecenv.async_reset(seed)
    timed(step, seconds)  # warm-up window
    rates = [timed(step, seconds).per_wall for _ in range(repeats)]
    vecenv.recv()
    return rates


def bench(
    ctx: typer.Context,
    env: str = typer.Argument(
        ..., help="Env name, e.g. breakout.", callback=ours_for_a_pufferlib_name
    ),
    config: Path | None = CONFIG_OPTION,
    seconds: float = typer.Option(2.0, "--seconds", min=0.01, help="Length of one timed window."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Timed windows; the median is shown."),
) -> None:
    """Print random-policy steps/s of ENV through the vectorizer its config names (vec.backend)."""
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args)
        vec = resolved.vec
        vecenv = make_vecenv(env, resolved)
        try:
            rates = measure_sps(vecenv, seconds, repeats, resolved.train.seed)
            agents = vecenv.num_agents
        finally:
            vecenv.close()
    console.print(header(), highlight=False)
    console.print(
        f"{env}: backend {vec.backend}, {vec.num_instances} env(s), {vec.num_workers} worker(s), "
        f"{agents} agents"
        + (f", {vec.instances_per_recv} env(s) per recv" if vec.instances_per_recv else "")
    )
    console.print(
        f"random policy: [bold]{statistics.median(rates):,.0f}[/bold] agent steps/s "
        f"(median of {repeats} x {seconds:g} s; min {min(rates):,.0f}, max {max(rates):,.0f})"
    )


def register(app: typer.Typer) -> None:
    """Add `bench` to `app`."""
    app.command("bench", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(bench)
