"""Pieces every subcommand shares: override-taking settings, error reporting, env lookup.

Bad input (an unknown env or key, a value of the wrong type or out of range, a device this
machine lacks, an unwritable data dir) ends the command with one line on stderr, `error: ...`
naming the key, the value and the fix, and exit status 2, before anything is built or written.
"""

from __future__ import annotations

import difflib
import tomllib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from puffer.core import (
    EnvNotFoundError,
    MissingPackageError,
    PufferError,
    ours_for_pufferlib_name,
    registered_envs,
)
from puffer.sweep.errors import SweepError
from puffer.train.config import Config, ConfigError, load_config
from puffer.train.limits import check_limits
from puffer.train.paths import check_name
from puffer.train.pufferlib_ini import PufferLibKeysNotRead

__all__ = [
    "CONFIG_OPTION",
    "OVERRIDES",
    "PROGRESS_OPTION",
    "TENSORBOARD_OPTION",
    "TRUST_CHECKPOINT_OPTION",
    "WANDB_OPTION",
    "console",
    "err_console",
    "logging_overrides",
    "ours_for_a_pufferlib_name",
    "reported_errors",
    "resolve_config",
]

# Soft wrap: a line is never broken at the console's width (80 columns when piped), so a
# result line stays one line for whoever greps it; tables still fit the width.
console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

# Subcommands that read a config accept any `--section.key value` after their own options.
OVERRIDES = {"allow_extra_args": True, "ignore_unknown_options": True}

CONFIG_OPTION = typer.Option(
    None,
    "--config",
    help="A TOML file layered over the env's shipped config (same sections and keys), or a "
    "PufferLib 3.0/4.0 .ini (its keys mapped to ours; what has no counterpart is refused).",
)

PROGRESS_OPTION = typer.Option(
    5.0,
    "--progress",
    min=0,
    help="Seconds between plain progress lines (steps, steps/s, score, losses, time left) "
    "where no dashboard is shown (output to a file or a pipe); 0: none.",
)
TENSORBOARD_OPTION = typer.Option(
    False,
    "--tensorboard",
    help="Also log to TensorBoard, in <run dir>/tensorboard/ (= --train.tensorboard true).",
)
TRUST_CHECKPOINT_OPTION = typer.Option(
    False,
    "--trust-checkpoint",
    help="Import the encoder module a checkpoint names even when your config does not name it "
    "(a checkpoint is data: without this, only built-in encoders and yours are built).",
)
WANDB_OPTION = typer.Option(
    False,
    "--wandb",
    help="Also log to Weights & Biases, files in <run dir>/wandb/ (= --train.wandb true); "
    "--train.wandb-project, -entity, -group and -tags place the run.",
)


def logging_overrides(tensorboard: bool, wandb: bool) -> list[str]:
    """The config overrides `--tensorboard` and `--wandb` stand for."""
    return [
        *(["--train.tensorboard", "true"] if tensorboard else []),
        *(["--train.wandb", "true"] if wandb else []),
    ]


OVERRIDES_EPILOG = (
    "Any config key can follow the options as [bold]--section.key value[/bold], e.g. "
    "--train.learning-rate 3e-4 --vec.num-instances 4; `puffer config ENV --keys` lists every key "
    "with its meaning."
)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn puffer's user-facing errors into one `error: ...` line on stderr and exit status 2.

    The message is printed as plain text (not rich markup, which would eat `[train]`), on one
    line (a multi-line message is joined with "; ").
    """
    try:
        yield
    except (PufferError, SweepError) as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        message = Text.assemble(("error:", "bold red"), " ", "; ".join(lines))
        err_console.print(message)
        raise typer.Exit(2) from error


def ours_for_a_pufferlib_name(name: str) -> str:
    """The ENV argument's callback: PufferLib's `puffer_<env>` is our `<env>`, said in a note
    on stderr (where it leaves a command's output, e.g. `puffer config`'s TOML, as it is)."""
    ours = ours_for_pufferlib_name(name)
    if ours is None:
        return name
    err_console.print(f"note: {name} is PufferLib's name for {ours}; using {ours}", markup=False)
    return ours


def _known_env_error(name: str, error: EnvNotFoundError) -> EnvNotFoundError:
    """The registry's error, plus the puffer envs loosely close to `name` where the registry
    found no close name itself (one list of names per message, and only related ones)."""
    if error.suggestions:
        return error
    close = difflib.get_close_matches(name, sorted(registered_envs()), n=5, cutoff=0.3)
    if not close:
        return error
    return EnvNotFoundError(f"{error}; closest puffer envs: {', '.join(close)}", tuple(close))


def _check_config_file(path: Path) -> None:
    """Refuse a `--config` file TOML cannot read as text: bytes that are not UTF-8, or tables
    or arrays nested past what the parser's recursion takes (a traceback otherwise)."""
    try:
        tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"--config {path}: byte {error.start} is not UTF-8, so it is no TOML file; save it "
            "as UTF-8 text"
        ) from None
    except RecursionError:
        raise ConfigError(
            f"--config {path}: tables or arrays nest too deep for a config; a config has "
            "sections of keys"
        ) from None
    except (OSError, tomllib.TOMLDecodeError):
        return  # load_config names these with their line


def resolve_config(
    env: str, config_file: Path | None, args: list[str], *, host: bool = False
) -> Config:
    """`load_config` for a subcommand, with an env-not-found message that lists close envs.

    Args:
        env: The env name argument.
        config_file: `--config FILE`, if given.
        args: The `--section.key value` tokens.
        host: Also check what depends on this machine (`TrainConfig.check_host`: the device
            exists, `train.data_dir` is writable); the commands that train set it.

    Raises:
        EnvNotFoundError, ConfigError, SweepConfigError: bad input, before anything is created.
    """
    if config_file is not None and config_file.suffix != ".ini":  # the .ini reader checks its own
        _check_config_file(config_file)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PufferLibKeysNotRead)
            resolved = load_config(env, config_file, args)
    except MissingPackageError:
        raise  # it names the import to fix; other env names would only mislead
    except EnvNotFoundError as error:
        known = _known_env_error(env, error)
        if known is error:
            raise
        raise known from error
    for warning in caught:  # a PufferLib .ini's keys that change nothing trained here
        if isinstance(warning.message, PufferLibKeysNotRead):
            err_console.print(f"note: {warning.message}", markup=False)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    check_limits(resolved)
    if host:
        resolved.train.check_host()
        if resolved.train.run_id:  # before anything is built: the run dir is made last
            check_name("--train.run-id", resolved.train.run_id)
    return resolved
