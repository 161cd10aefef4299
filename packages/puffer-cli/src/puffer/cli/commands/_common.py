"""Pieces every subcommand shares: override-taking settings, error reporting, env lookup."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from puffer.cli.config import Config, config_names, load_config
from puffer.core import EnvNotFoundError, PufferError, registered_envs
from puffer.sweep.errors import SweepError

__all__ = [
    "CONFIG_OPTION",
    "OVERRIDES",
    "console",
    "err_console",
    "reported_errors",
    "resolve_config",
]

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

# Subcommands that read a config accept any `--section.key value` after their own options.
OVERRIDES = {"allow_extra_args": True, "ignore_unknown_options": True}

CONFIG_OPTION = typer.Option(
    None,
    "--config",
    help="A TOML file layered over the env's shipped config (same sections and keys).",
    exists=True,
    dir_okay=False,
)

OVERRIDES_EPILOG = (
    "Any config key can follow the options as [bold]--section.key value[/bold], e.g. "
    "--train.learning-rate 3e-4 --vec.num-envs 4; `puffer config ENV --keys` lists every key "
    "with its meaning."
)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn puffer's user-facing errors into a red message and exit status 2."""
    try:
        yield
    except (PufferError, SweepError) as error:
        # escape: messages hold brackets (`pip install "puffer-envs[atari]"`) rich would eat.
        err_console.print(f"[bold red]error:[/bold red] {escape(str(error))}", soft_wrap=True)
        raise typer.Exit(2) from error


def _known_env_error(name: str, error: EnvNotFoundError) -> EnvNotFoundError:
    """The registry's error plus the puffer envs closest to `name` (always some)."""
    names = sorted(set(registered_envs()) | set(config_names()))
    close = difflib.get_close_matches(name, names, n=5, cutoff=0.3) or names
    return EnvNotFoundError(f"{error}\nclosest puffer envs: {', '.join(close)}")


def resolve_config(env: str, config_file: Path | None, args: list[str]) -> Config:
    """`load_config` for a subcommand, with an env-not-found message that lists close envs."""
    try:
        return load_config(env, config_file, args)
    except EnvNotFoundError as error:
        raise _known_env_error(env, error) from error
