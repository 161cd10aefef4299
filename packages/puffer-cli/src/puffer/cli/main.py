"""The `puffer` command: a typer app whose subcommands live in `puffer.cli.commands`.

`main()` is the console-script entry point. It sets up process-wide behaviour (signals, warning
display, pygame's banner, orphaned /dev/shm blocks swept) before running the app; importing this
module changes nothing but the layout of typer's help option tables (`puffer.cli.helptable`).
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import warnings
from typing import TextIO

import typer
import typer.rich_utils

from puffer.cli import __version__
from puffer.cli.commands import (
    bench,
    build,
    dashboard,
    evaluate,
    listing,
    play,
    sweep,
    train,
)
from puffer.cli.helptable import OptionsTable
from puffer.vector import remove_orphaned_blocks

__all__ = ["app", "main"]

typer.rich_utils.Table = OptionsTable  # type: ignore[misc]  # two columns: names, then help

app = typer.Typer(
    name="puffer",
    help=(
        "puffer: fast reinforcement learning. Train, evaluate, sweep and benchmark envs from "
        "typed TOML configs; override any key as [bold]--section.key value[/bold] "
        "(e.g. --train.learning-rate 3e-4)."
    ),
    rich_markup_mode="rich",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"puffer {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """puffer: fast reinforcement learning."""


for module in (train, evaluate, sweep, bench, listing, build, dashboard, play):
    module.register(app)


def _paragraphs(text: str) -> str:
    """`text` with each paragraph on one line: typer keeps a docstring's line breaks after its
    first paragraph, which at any width but the source's reads ragged; rich wraps them again."""
    return "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n"))


for command in app.registered_commands:
    command.help = _paragraphs(command.help or inspect.getdoc(command.callback) or "")


def main() -> None:
    """Entry point of the `puffer` console script."""
    # SIGPIPE keeps Python's setting (ignored): a write to a pipe whose reader is gone raises
    # BrokenPipeError, which click turns into a quiet exit 1 when stdout is that pipe
    # (`puffer list | head`). With the default action instead, the trainer's write to a killed
    # vectorizer worker's pipe ended the process silently (rc 141) rather than reporting it.
    # Ctrl-C is how users stop training: keep it a KeyboardInterrupt, which `train` reports.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Third-party deprecation chatter is not for CLI users; `python -W` still takes precedence.
    if not sys.warnoptions:
        warnings.simplefilter("ignore", DeprecationWarning)
    warnings.showwarning = _show_warning
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    # Shared-memory blocks of a killed process group (kill -9 of a job, an OOM kill of the tree)
    # stay in /dev/shm, which is RAM, until someone unlinks them: every command does, for its
    # user's blocks whose owner process is gone, so the next `puffer list` gives the RAM back.
    remove_orphaned_blocks()
    try:
        code = app(standalone_mode=False)
    except typer.Abort:
        typer.echo("aborted", err=True)
        code = 1
    except typer.TyperException as error:  # typer's own click: usage errors
        code = _report_usage_error(error)
    sys.exit(code or 0)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as one `warning: ...` line on stderr, the form of `error: ...` lines."""
    typer.echo(f"warning: {message}", err=True)


def _report_usage_error(error: typer.TyperException) -> int:
    """A usage error (missing ENV, `--episodes 0`, an unknown command) as one `error:` line,
    the form of config errors, rather than typer's boxed usage panel; returns the exit code."""
    if type(error).__name__ == "NoArgsIsHelpError":
        error.show()  # type: ignore[attr-defined]  # `puffer` alone prints the help
    else:
        ctx = getattr(error, "ctx", None)
        where = f"`{ctx.command_path} --help`" if ctx is not None else "`puffer --help`"
        typer.echo(f"error: {error.format_message()} (see {where})", err=True)  # type: ignore[attr-defined]
    return getattr(error, "exit_code", 2)
