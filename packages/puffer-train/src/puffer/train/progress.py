"""Plain progress lines, for output that is not a terminal (a file, a pipe, a batch job's log).

`ProgressLines` is a metrics sink that writes one line at most every `interval` seconds (and
always for the first and the last epoch), which tools like `tail -f`, Slurm and CI logs show as
it comes. `Ticker` is the clock it uses, shared by the other long commands (eval, sweeps).
"""

from __future__ import annotations

import math
import time
from typing import TextIO

from puffer.train.score import SCORE, SCORE_EPISODES, RunScore

__all__ = ["LOSSES_SHOWN", "ProgressLines", "Ticker", "duration"]

# The losses a line shows, in this order (all of them are in the metrics file).
LOSSES_SHOWN = ("policy_loss", "value_loss", "entropy", "approx_kl")


def duration(seconds: float) -> str:
    """`1h 02m 03s`, `2m 03s` or `3s`.

    Example:
        >>> duration(3723.4), duration(123), duration(3)
        ('1h 02m 03s', '2m 03s', '3s')
    """
    if not math.isfinite(seconds):
        return "?"
    seconds = int(seconds)
    hours, minutes = seconds // 3600, seconds // 60 % 60
    if hours:
        return f"{hours}h {minutes:02d}m {seconds % 60:02d}s"
    if minutes:
        return f"{minutes}m {seconds % 60:02d}s"
    return f"{seconds}s"


class Ticker:
    """True once every `interval` seconds: `due()` answers and restarts the wait.

    Args:
        interval: seconds between two True answers; the first call is True.
    """

    def __init__(self, interval: float):
        self.interval = interval
        self.start = time.monotonic()
        self._last: float | None = None

    def due(self) -> bool:
        now = time.monotonic()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True

    @property
    def elapsed(self) -> float:
        """Seconds since the ticker was made."""
        return time.monotonic() - self.start


class ProgressLines:
    """Writes a progress line per `interval` seconds of training, from each epoch's metrics.

    A line: elapsed time, steps done of the total, steps per second, the score (its statistic
    and the episodes it averages), the main losses and the time left, e.g.

        [1m 05s] step 1,245,184/10,000,000 (12%) | 19,602 steps/s | score 3.2 (score, 128
        episodes) | policy_loss -0.012 value_loss 0.41 entropy 1.02 approx_kl 0.003 |
        left 7m 27s

    Args:
        file: where to write (flushed after each line).
        interval: seconds between lines (the first and the last epoch always get one).
        label: written before each line (e.g. the env, or a sweep's run).
        score: the run's score, which names the statistic scored.
    """

    def __init__(
        self, file: TextIO, interval: float = 5.0, label: str = "", score: RunScore | None = None
    ):
        self.file = file
        self.label = label
        self.score = score
        self.ticker = Ticker(interval)
        self.closed = False

    def log(self, metrics: dict[str, float], step: int) -> None:
        last = metrics.get("performance/epoch", 0) >= metrics.get("performance/epochs", math.inf)
        if self.ticker.due() or last:
            self.file.write(self.line(metrics, step) + "\n")
            self.file.flush()

    def line(self, metrics: dict[str, float], step: int) -> str:
        """The line for one epoch's metrics."""
        sps = metrics.get("performance/sps", 0.0)
        left = metrics.get("performance/time_left", math.nan)
        epoch, epochs = metrics.get("performance/epoch", 0), metrics.get("performance/epochs", 0)
        done = f"step {step:,}"
        if epoch > 0 and epochs > 0:
            # Every epoch is one batch, so the total is the batch times the epochs.
            done += f"/{round(step * epochs / epoch):,} ({100 * epoch / epochs:.0f}%)"
        score = metrics.get(SCORE, math.nan)
        stat = f"{self.score.stat}, " if self.score is not None else ""
        scored = (
            f"score {score:.4g} ({stat}{int(metrics.get(SCORE_EPISODES, 0)):,} episodes)"
            if math.isfinite(score)
            else "score - (no episode finished yet)"
        )
        losses = " ".join(
            f"{name} {metrics[f'losses/{name}']:.3g}"
            for name in LOSSES_SHOWN
            if f"losses/{name}" in metrics
        )
        parts = [
            f"[{duration(self.ticker.elapsed)}]{' ' + self.label if self.label else ''} {done}",
            f"{sps:,.0f} steps/s",
            scored,
            *([losses] if losses else []),
            f"left {duration(left)}",
        ]
        return " | ".join(parts)

    def close(self) -> None:
        self.closed = True
