"""A run's score: one definition, used by `train`'s last line, the dashboards, the metrics files
and sweeps alike.

    score = the mean, per episode, of one env statistic (`train.score_stat`: the env's `score`
    when it reports one, else `episode_return`) over the latest iterations that together hold at
    least 100 finished episodes (all iterations while fewer have finished)

Whole iterations, because the per-iteration metrics are what every reader has: the score of any
row of `metrics.jsonl` can be recomputed from the rows before it. Each iteration's mean is
weighted by its episode count (`performance/episodes`; a native env's log of `n` episodes counts
`n` times). `ScoredSinks` adds the score to every iteration's metrics as `performance/score` (with
`performance/score_episodes`, the episodes it averages) before its sinks see them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from typing import Any

from puffer.train.metrics import MetricsSink

__all__ = [
    "AUTO",
    "SCORE",
    "SCORE_EPISODES",
    "WINDOW_EPISODES",
    "RunScore",
    "ScoredSinks",
    "scored_stat",
]

# Finished episodes the score averages over, at least.
WINDOW_EPISODES = 100
# `train.score_stat` that picks `score` when the env reports it, else `episode_return`.
AUTO = "auto"
SCORE = "performance/score"
SCORE_EPISODES = "performance/score_episodes"
_ENV = "environment/"
_EPISODES = "performance/episodes"


def scored_stat(requested: str, reported: Iterable[str]) -> str:
    """The statistic a score averages: `requested`, or for "auto" `score` when the env
    reports it (`reported`), else `episode_return`.

    Example:
        >>> scored_stat("auto", ["episode_return", "score"]), scored_stat("auto", [])
        ('score', 'episode_return')
    """
    if requested != AUTO:
        return requested
    return "score" if "score" in set(reported) else "episode_return"


class RunScore:
    """The score of a run, iteration by iteration (module docstring).

    Args:
        stat: the env statistic scored (`train.score_stat`), or "auto".

    Example:
        >>> score = RunScore()
        >>> score.update({"environment/episode_return": 2.0, "performance/episodes": 60})
        >>> score.update({"environment/episode_return": 5.0, "performance/episodes": 60})
        >>> score.stat, score.value, score.episodes
        ('episode_return', 3.5, 120)
        >>> score.update({"environment/episode_return": 8.0, "performance/episodes": 60})
        >>> score.value  # the first iteration left the window: 120 episodes remain
        6.5
    """

    def __init__(self, stat: str = AUTO):
        self.requested = stat
        # (episodes, {statistic: mean}) of the iterations in the window, oldest first.
        self._iterations: deque[tuple[float, dict[str, float]]] = deque()

    @property
    def stat(self) -> str:
        """The statistic scored (`scored_stat` of the statistics in the window)."""
        return scored_stat(self.requested, {key for _, means in self._iterations for key in means})

    def update(self, metrics: dict[str, float]) -> None:
        """Take one iteration's metrics (iterations without finished episodes change nothing)."""
        episodes = float(metrics.get(_EPISODES, 0.0))
        means = {
            key.removeprefix(_ENV): value
            for key, value in metrics.items()
            if key.startswith(_ENV) and math.isfinite(value)
        }
        if episodes <= 0 or not means:
            return
        self._iterations.append((episodes, means))
        while self._iterations and self.episodes - self._iterations[0][0] >= WINDOW_EPISODES:
            self._iterations.popleft()

    @property
    def episodes(self) -> int:
        """Episodes in the window."""
        return int(sum(count for count, _ in self._iterations))

    def means(self) -> dict[str, float]:
        """Every env statistic averaged per episode over the window (the score's own is
        `value`)."""
        totals: dict[str, list[float]] = {}
        for count, means in self._iterations:
            for key, value in means.items():
                total = totals.setdefault(key, [0.0, 0.0])
                total[0] += count * value
                total[1] += count
        return {key: weighted / count for key, (weighted, count) in totals.items()}

    @property
    def value(self) -> float:
        """The score; nan until an episode reporting the statistic has finished."""
        return self.means().get(self.stat, math.nan)


class ScoredSinks:
    """A metrics sink that adds the run's score to each iteration's metrics, then logs them to
    `sinks` (in order). Closing it closes them.

    Args:
        sinks: where the scored metrics go.
        score: the run's `RunScore` (primed from the metrics file on resume).
    """

    def __init__(self, sinks: list[MetricsSink], score: RunScore):
        self.sinks = sinks
        self.score = score

    def log(self, metrics: dict[str, float], step: int) -> None:
        self.score.update(metrics)
        scored: dict[str, Any] = {
            **metrics,
            SCORE: self.score.value,
            SCORE_EPISODES: float(self.score.episodes),
        }
        for sink in self.sinks:
            sink.log(scored, step)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()
