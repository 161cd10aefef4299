"""Plain progress lines, for output that is not a terminal (a file, a pipe, a batch job's log).

`ProgressLines` is a metrics sink that writes one line at most every `interval` seconds (and
always for the first and the last iteration), which tools like `tail -f`, Slurm and CI logs show
as it comes; while an iteration takes longer than `heartbeat` seconds (the first one, a loaded
machine, a large batch), a shorter line says which iteration is in progress, so the log never
goes quiet for longer (and while iterations keep ending, no such line comes between them).
`Ticker` is the clock it uses, shared by the other long commands (eval, sweeps).
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from typing import TextIO

from puffer.train.score import SCORE, SCORE_EPISODES, RunScore

__all__ = ["HEARTBEAT", "LOSSES_SHOWN", "ProgressLines", "Ticker", "counted", "duration"]

# Seconds without a line after which ProgressLines says the run is still in an iteration.
HEARTBEAT = 5.0

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


def counted(n: float, noun: str) -> str:
    """`1 episode`, `2 episodes`, `1,024 episodes`: a count with its noun in the right number.

    Example:
        >>> counted(1, "episode"), counted(1024, "episode"), counted(0, "iteration")
        ('1 episode', '1,024 episodes', '0 iterations')
    """
    n = int(n)
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


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
    """Writes a progress line per `interval` seconds of training, from each iteration's metrics.

    A line: elapsed time, steps done of the total, steps per second, the score (its statistic
    and the episodes it averages), the main losses and the time left, e.g.

        [1m 05s] step 1,245,184/10,000,000 (12%) | 19,602 steps/s | score 3.2 (score, 128
        episodes) | policy_loss -0.012 value_loss 0.41 entropy 1.02 approx_kl 0.003 |
        left 7m 27s

    Between iterations that take longer, a line every `max(interval, heartbeat)` seconds says
    the run is alive: `[1m 58s] cartpole step 512/99,840 (1%) | iteration 3/390 in progress`
    (before the first iteration ends: `[12s] cartpole first iteration in progress`). A
    background thread writes those; it ends with the last iteration's line, `close()`, or the
    sink itself.

    Args:
        file: where to write (flushed after each line).
        interval: seconds between lines (the first and the last iteration always get one).
        label: written before each line (e.g. the env, or a sweep's run).
        score: the run's score, which names the statistic scored.
        heartbeat: the longest quiet between two lines, unless `interval` is longer.
    """

    def __init__(
        self,
        file: TextIO,
        interval: float = 5.0,
        label: str = "",
        score: RunScore | None = None,
        heartbeat: float = HEARTBEAT,
    ):
        self.file = file
        self.label = label
        self.score = score
        self.ticker = Ticker(interval)
        self.closed = False
        self._quiet = max(interval, heartbeat)
        self._lock = threading.Lock()
        # When an iteration last ended or a line was written: while iterations keep ending, the
        # run is plainly alive and the next due iteration line follows; an in-progress line then
        # would only repeat the iteration line written a moment later.
        self._active = time.monotonic()
        self._latest: tuple[dict[str, float], int] | None = None
        self._stop = threading.Event()
        # The thread holds the sink weakly: a sink dropped without close() stops it too.
        self._beats = threading.Thread(
            target=_beat,
            args=(weakref.ref(self), self._stop, min(1.0, self._quiet / 4)),
            name="puffer-progress",
            daemon=True,
        )
        self._beats.start()

    def log(self, metrics: dict[str, float], step: int) -> None:
        iteration, iterations = _iterations(metrics)
        last = iterations > 0 and iteration >= iterations
        with self._lock:
            self._latest = (metrics, step)
            self._active = time.monotonic()
            if last:
                self._stop.set()  # nothing is in progress after the last iteration
            if self.ticker.due() or last:
                self._write(self.line(metrics, step))

    def beat(self) -> None:
        """Write the in-progress line if no line was written for the quiet time."""
        with self._lock:
            if self._stop.is_set() or time.monotonic() - self._active < self._quiet:
                return
            try:
                self._write(self.waiting_line())
            except (OSError, ValueError):  # the file is gone (closed, a broken pipe)
                self._stop.set()

    def waiting_line(self) -> str:
        """The line for an iteration still in progress."""
        if self._latest is None:
            return f"{self._prefix()} first iteration in progress"
        metrics, step = self._latest
        iteration, iterations = _iterations(metrics)
        done = self._done(step, iteration, iterations)
        of = f"/{iterations:,.0f}" if iterations > 0 else ""
        return f"{self._prefix()} {done} | iteration {iteration + 1:,.0f}{of} in progress"

    def _write(self, text: str) -> None:
        self.file.write(text + "\n")
        self.file.flush()
        self._active = time.monotonic()

    def _prefix(self) -> str:
        return f"[{duration(self.ticker.elapsed)}]{' ' + self.label if self.label else ''}"

    @staticmethod
    def _done(step: int, iteration: float, iterations: float) -> str:
        done = f"step {step:,}"
        if iteration > 0 and iterations > 0:
            # Every iteration is one batch, so the total is the batch times the iterations.
            done += (
                f"/{round(step * iterations / iteration):,} ({100 * iteration / iterations:.0f}%)"
            )
        return done

    def line(self, metrics: dict[str, float], step: int) -> str:
        """The line for one iteration's metrics."""
        sps = metrics.get("performance/sps", 0.0)
        left = metrics.get("performance/time_left", math.nan)
        iteration, iterations = _iterations(metrics)
        done = self._done(step, iteration, iterations)
        score = metrics.get(SCORE, math.nan)
        stat = f"{self.score.stat}, " if self.score is not None else ""
        scored = (
            f"score {score:.4g} ({stat}{counted(metrics.get(SCORE_EPISODES, 0), 'episode')})"
            if math.isfinite(score)
            else "score - (no episode finished yet)"
        )
        losses = " ".join(
            f"{name} {metrics[f'losses/{name}']:.3g}"
            for name in LOSSES_SHOWN
            if f"losses/{name}" in metrics
        )
        parts = [
            f"{self._prefix()} {done}",
            f"{sps:,.0f} steps/s",
            scored,
            *([losses] if losses else []),
            f"left {duration(left)}",
        ]
        return " | ".join(parts)

    def close(self) -> None:
        self._stop.set()
        self._beats.join()
        self.closed = True


def _iterations(metrics: dict[str, float]) -> tuple[float, float]:
    """The iterations done and planned that `metrics` report (0 where they say nothing)."""
    return metrics.get("performance/iteration", 0.0), metrics.get("performance/iterations", 0.0)


def _beat(sink: weakref.ref[ProgressLines], stop: threading.Event, poll: float) -> None:
    """The heartbeat thread: every `poll` seconds, the in-progress line if one is due."""
    while not stop.wait(poll):
        lines = sink()
        if lines is None:
            return
        lines.beat()
        del lines  # no strong reference while waiting
