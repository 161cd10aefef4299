"""`puffer list` (every registered env) and `puffer config ENV` (its resolved config)."""

from __future__ import annotations

from pathlib import Path

import typer
from gymnasium import spaces
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from puffer.cli.commands._common import (
    CONFIG_OPTION,
    OVERRIDES,
    OVERRIDES_EPILOG,
    console,
    ours_for_a_pufferlib_name,
    reported_errors,
    resolve_config,
)
from puffer.core import env_creator, make, registered_envs
from puffer.core.registry import env_package
from puffer.train.config.keys import flag

__all__ = ["describe_space", "list_envs", "register", "show_config"]


def describe_space(space: spaces.Space) -> str:
    """A short text for a space: `Box(uint8, (84, 84, 1))`, `Discrete(4)`, ...

    Example:
        >>> describe_space(spaces.Box(0, 1, (3,), "float32"))
        'Box(float32, (3,))'
    """
    if isinstance(space, spaces.Box):
        return f"Box({space.dtype}, {space.shape})"
    if isinstance(space, spaces.Discrete):
        return f"Discrete({space.n})"
    if isinstance(space, spaces.MultiDiscrete):
        return f"MultiDiscrete({space.nvec.tolist()})"
    return repr(space)


# Wide enough for the table when piped (rich assumes 80 columns without a terminal).
_PIPE_WIDTH = 132


def list_envs() -> None:
    """Print a table of every env registered through the `puffer.envs` and `puffer.env_families`
    entry points.

    Each env is created once with its defaults (one instance) to read its spaces and agent
    count; an env that fails to build is listed with the error instead.
    """
    table = Table(title="puffer envs (registered through entry points)")
    table.add_column("env", no_wrap=True)
    for column in ("observation", "action", "agents", "package", "config"):
        table.add_column(column)
    missing = _missing_family_envs()
    for name, value in sorted(registered_envs().items()):
        if name in missing:
            continue  # the family table says once what installs them
        package = env_package(name) or value.partition(":")[0]
        try:
            env = make(name)
        except Exception as error:  # a broken plugin must not hide the others
            row = (Text(f"cannot build: {error}", style="red"), "", "")
        else:
            row = (
                describe_space(env.single_observation_space),
                describe_space(env.single_action_space),
                str(env.num_agents),
            )
            env.close()
        has_config = bool(getattr(env_creator(name), "config_sources", ()))
        table.add_row(name, *row, package, "yes" if has_config else "default")
    out = console if console.is_terminal else Console(width=_PIPE_WIDTH, highlight=False)
    out.print(table)
    families = _family_table()
    if families is not None:
        out.print(families)
    else:
        out.print(
            "Not installed: puffer-envs, the third-party families (Atari, MinAtar, MiniGrid, "
            'Crafter, NetHack, ...): pip install "puffer-envs[all]" or one family\'s extra.',
            markup=False,
        )
    out.print(
        "Also: gym-<Gymnasium id> (e.g. gym-CartPole-v1) and pettingzoo-<family>.<module> "
        "(e.g. pettingzoo-classic.rps_v2), emulated by puffer.core."
    )


def _missing_family_envs() -> set[str]:
    """Env ids of puffer-envs' families whose library is not installed."""
    try:
        from puffer.envs import FAMILIES
    except ImportError:
        return set()
    return {env for f in FAMILIES.values() if not f.installed for env in f.env_ids()}


def _family_table() -> Table | None:
    """Each third-party family of puffer-envs (optional) with its state: installed, or the
    command that installs it."""
    try:
        from puffer.envs import FAMILIES
    except ImportError:
        return None
    table = Table(title="env families (puffer-envs)")
    table.add_column("family")
    table.add_column("state", no_wrap=True)  # an install line must stay one line
    for column in ("envs", "about"):
        table.add_column(column)
    for family in FAMILIES.values():
        command = escape(family.install_command)  # its [extra] is no rich markup
        state = "installed" if family.installed else f"[yellow]{command}[/yellow]"
        table.add_row(family.name, state, str(len(family.env_ids())), family.summary)
    return table


def show_config(
    ctx: typer.Context,
    env: str = typer.Argument(..., callback=ours_for_a_pufferlib_name),
    config: Path | None = CONFIG_OPTION,
    keys: bool = typer.Option(
        False, "--keys", help="A table of every key: its flag, value, type and meaning."
    ),
) -> None:
    """Print the resolved config of ENV as TOML (after --config and overrides)."""
    with reported_errors():
        resolved = resolve_config(env, config, ctx.args)
    if not keys:
        typer.echo(resolved.to_toml(), nl=False)
        return
    table = Table(title=f"config keys of {env}")
    for column in ("flag", "value", "type", "meaning"):
        table.add_column(column)
    for path, value, kind, meaning in resolved.keys():
        shown = "unset" if value is None else repr(value)
        table.add_row(flag(path), shown, str(kind), Text(meaning))
    out = console if console.is_terminal else Console(width=_PIPE_WIDTH, highlight=False)
    out.print(table)


def register(app: typer.Typer) -> None:
    """Add `list` and `config` to `app`."""
    app.command("list", help="List every registered env: spaces, agents, source package.")(
        list_envs
    )
    app.command("config", context_settings=OVERRIDES, epilog=OVERRIDES_EPILOG)(show_config)
