"""The `--help` option tables in two columns: the option's names and type, then its help.

typer lays an option out in six columns (required mark, long and short name, negative long and
short name, type) before the help, and rich shrinks them all alike: at 80 columns the help got
21 characters and a long option name was cut short (`--train.wandb-proje…`). `OptionsTable`
stacks the names and the type in the first column, which never wraps, and gives the help the
rest of the line. typer builds its option panels with `typer.rich_utils.Table`, which
`puffer.cli.main` sets to this class; a table that declares its own columns (the commands
panel) is left as it is.
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

__all__ = ["OptionsTable"]


class OptionsTable(Table):
    """A rich `Table` that takes typer's option rows, `[required,] long, short, negative long,
    negative short, type, help`, as two: the names (negative ones on their own line, the type
    under them, but a flag's) and the help."""

    def add_row(self, *renderables: RenderableType | None, **kwargs: Any) -> None:
        if (self.columns and len(self.columns) != 2) or len(renderables) < 6:
            super().add_row(*renderables, **kwargs)  # a table of its own layout
            return
        if not self.columns:
            self.add_column(no_wrap=True)
            self.add_column(ratio=1)
        *names, types, text = renderables
        required = names[0] if len(names) == 5 else ""
        lines = [Text(" ").join(c for c in (required, *names[-4:-2]) if _shown(c))]
        # A flag's `<bool>` says nothing its names do not.
        plain_flag = isinstance(types, Text) and types.plain == "<bool>"
        lines += [Text(" ").join(c for c in names[-2:] if _shown(c)), "" if plain_flag else types]
        super().add_row(Text("\n").join(line for line in lines if _shown(line)), text, **kwargs)


def _shown(cell: RenderableType | None) -> bool:
    return isinstance(cell, Text) and bool(cell.plain)
