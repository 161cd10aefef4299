"""A rich live terminal dashboard, as a metrics sink: SPS, steps, iteration, time left, losses, env
stats and where the time goes."""

from __future__ import annotations

import math
import time

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from puffer.train.progress import counted, duration
from puffer.train.score import SCORE, SCORE_EPISODES, RunScore

__all__ = ["Dashboard"]

_ENV = "environment/"


def _section(metrics: dict[str, float], prefix: str) -> dict[str, float]:
    return {k.removeprefix(prefix): v for k, v in metrics.items() if k.startswith(prefix)}


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "-"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.2f}M"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.3g}"


class Dashboard:
    """Redraws one screen per iteration from the trainer's metrics dict.

    Args:
        env_name: shown in the title.
        console: where to draw (default: the terminal); pass `Console(file=...)` to capture.
        score: the run's score, which names the statistic scored.
    """

    def __init__(
        self, env_name: str, console: Console | None = None, score: RunScore | None = None
    ):
        self.env_name = env_name
        self.score = score
        self.console = console or Console()
        self._start = time.perf_counter()
        self._live = Live(console=self.console, auto_refresh=False, transient=False)
        self._live.start()
        self.closed = False

    def render(self, metrics: dict[str, float], step: int) -> Group:
        """The dashboard for one metrics dict (also usable without a live screen).

        The env table holds the statistics over the score's episodes (the last iterations with
        100 episodes) when the dashboard has the run's score, else this iteration's means.
        """
        score = f"score {_number(metrics.get(SCORE, math.nan))}"
        if self.score is not None:
            score += f" ({self.score.stat}, {counted(metrics.get(SCORE_EPISODES, 0), 'episode')})"
        summary = Table(title=f"puffer · {self.env_name}", show_header=False, expand=True)
        summary.add_row(
            f"SPS {_number(metrics.get('performance/sps', 0.0))}",
            f"steps {_number(step)}",
            f"iteration {int(metrics.get('performance/iteration', 0))}"
            f"/{int(metrics.get('performance/iterations', 0))}",
            score,
            f"elapsed {duration(time.perf_counter() - self._start)}",
            f"left {duration(metrics.get('performance/time_left', 0.0))}",
        )
        if self.score is not None:
            env_stats = self.score.means()
        else:
            env_stats = _section(metrics, _ENV)
        columns = (
            ("env", env_stats, _number),
            ("losses", _section(metrics, "losses/"), _number),
            ("time", _section(metrics, "time/"), lambda v: f"{100 * v:.0f}%"),
        )
        sections = []
        for title, values, shown in columns:
            table = Table(title=title, expand=True)
            table.add_column("name")
            table.add_column("value", justify="right")
            for key, value in sorted(values.items()):
                table.add_row(key, shown(value))
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
