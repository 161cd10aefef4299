"""A rich live terminal dashboard, as a metrics sink: SPS, steps, epoch, time left, losses, env
stats and where the time goes."""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

__all__ = ["Dashboard"]


def _number(value: float) -> str:
    if abs(value) >= 1e6:
        return f"{value / 1e6:.2f}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.3g}"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h {seconds // 60 % 60:02d}m {seconds % 60:02d}s"


class Dashboard:
    """Redraws one screen per epoch from the trainer's metrics dict.

    Args:
        env_name: shown in the title.
        console: where to draw (default: the terminal); pass `Console(file=...)` to capture.
    """

    def __init__(self, env_name: str, console: Console | None = None):
        self.env_name = env_name
        self.console = console or Console()
        self._start = time.perf_counter()
        self._live = Live(console=self.console, auto_refresh=False, transient=False)
        self._live.start()
        self.closed = False

    def render(self, metrics: dict[str, float], step: int) -> Group:
        """The dashboard for one metrics dict (also usable without a live screen)."""
        summary = Table(title=f"puffer · {self.env_name}", show_header=False, expand=True)
        summary.add_row(
            f"SPS {_number(metrics.get('performance/sps', 0.0))}",
            f"steps {_number(step)}",
            f"epoch {int(metrics.get('performance/epoch', 0))}"
            f"/{int(metrics.get('performance/epochs', 0))}",
            f"elapsed {_duration(time.perf_counter() - self._start)}",
            f"left {_duration(metrics.get('performance/time_left', 0.0))}",
        )
        sections = []
        for prefix, title in (("environment/", "env"), ("losses/", "losses"), ("time/", "time")):
            table = Table(title=title, expand=True)
            table.add_column("name")
            table.add_column("value", justify="right")
            for key, value in sorted(metrics.items()):
                if key.startswith(prefix):
                    shown = f"{100 * value:.0f}%" if prefix == "time/" else _number(value)
                    table.add_row(key.removeprefix(prefix), shown)
            sections.append(table)
        grid = Table.grid(expand=True)
        grid.add_row(*sections)
        return Group(summary, grid)

    def log(self, metrics: dict[str, float], step: int) -> None:
        self._live.update(self.render(metrics, step), refresh=True)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._live.stop()
