"""The ask/tell interface every search method shares, the Pareto front, and two baselines.

A method is asked for a suggestion (`suggest`) and told how it went (`observe`). It keeps every
observation as a point of [-1, 1]^d with a score (stored sign-flipped when the goal is to
minimize, so methods always maximize) and a cost. A score of NaN or None marks a failed run.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from puffer.sweep.errors import SweepConfigError
from puffer.sweep.space import Params, Scalar, Space

__all__ = ["CurvePoint", "Method", "ParetoGenetic", "Random", "pareto_front"]

CurvePoint = tuple[float, float, float]
"""One point of a learning curve: (steps so far, score so far, cost so far)."""


def pareto_front(score: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both score (higher) and cost (lower).

    Args:
        score: float array of shape (n,), higher is better.
        cost: float array of shape (n,), lower is better.

    Returns:
        int64 array of front indices, by increasing cost (and so increasing score).

    Example:
        >>> pareto_front(np.array([1.0, 3.0, 2.0, 0.5]), np.array([1.0, 4.0, 5.0, 0.2])).tolist()
        [3, 0, 1]
    """
    order = np.lexsort((-score, cost))  # by cost, ties broken toward the higher score
    front = []
    best = -np.inf
    for i in order:
        if score[i] > best:
            front.append(i)
            best = score[i]
    return np.asarray(front, dtype=np.int64)


class Method(ABC):
    """Base class of the search methods: one ask/tell interface.

    Args:
        space: The searched parameters.
        goal: "maximize" or "minimize" the score.
        seed: Seed of the method's random draws.

    Attributes:
        num_runs: Runs observed (one per `observe` or `observe_curve` call), failures included.
        num_ok_runs: Those of them that did not fail; warm-ups count these, not the
            observations, of which a learning curve adds several per run.
    """

    def __init__(
        self, space: Space, *, goal: Literal["maximize", "minimize"] = "maximize", seed: int = 0
    ) -> None:
        if goal not in ("maximize", "minimize"):
            raise SweepConfigError(
                f"{type(self).__name__}: goal must be 'maximize' or 'minimize', got {goal!r}"
            )
        self.space = space
        self.goal = goal
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self._x: list[np.ndarray] = []
        self._score: list[float] = []
        self._cost: list[float] = []
        self._failed: list[bool] = []
        self.num_runs = 0
        self.num_ok_runs = 0
        self._num_suggested = 0

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(params={len(self.space)}, goal={self.goal!r}, "
            f"observations={len(self._x)})"
        )

    def suggest(self) -> Params:
        """Returns the next parameters to try, a dict in the space's key order.

        The random draws of suggestion i come from a generator seeded with (seed, i), and runs
        replayed from a store count toward i, so a resumed sweep does not repeat itself.
        """
        self._num_suggested = max(self._num_suggested, self.num_runs) + 1
        self.rng = np.random.default_rng([self.seed, self._num_suggested])
        return self._suggest()

    @abstractmethod
    def _suggest(self) -> Params:
        """The method's own suggestion, drawing from ``self.rng``."""

    def observe(self, params: Mapping[str, Scalar], score: float | None, cost: float) -> None:
        """Records one finished run.

        Args:
            params: The run's parameters (every key of the space; extra keys are ignored).
            score: The metric reached; None or NaN marks a failed run (crash, divergence).
            cost: What the run cost, e.g. seconds; must be finite and >= 0.

        Raises:
            SweepConfigError: If ``cost`` is negative or not finite, or a parameter is missing.
        """
        failed = self._record(params, score, cost)
        self.num_runs += 1
        self.num_ok_runs += not failed

    def observe_curve(self, params: Mapping[str, Scalar], curve: Sequence[CurvePoint]) -> None:
        """Records one finished run with its learning curve.

        Each point becomes an observation whose steps parameter (``space.steps_key``) is the steps
        reached so far, so the method learns what shorter runs would have scored. The last point
        is the run's own result. Without a ``steps_key`` only the last point is recorded.

        Args:
            params: The run's parameters.
            curve: (steps, score, cost) points in order of steps, cost counted from the start.

        Raises:
            SweepConfigError: If ``curve`` is empty.
        """
        if not curve:
            raise SweepConfigError(
                f"{type(self).__name__}.observe_curve: expected at least one (steps, score, cost) "
                "point, got an empty curve; call observe() for runs without a curve"
            )
        key = self.space.steps_key
        if key is not None:
            for steps, score, cost in curve[:-1]:
                self._record({**params, key: steps}, score, cost)
        steps, score, cost = curve[-1]
        self.observe(params if key is None else {**params, key: steps}, score, cost)

    def _record(self, params: Mapping[str, Scalar], score: float | None, cost: float) -> bool:
        """Appends one observation; returns whether it is a failure."""
        if not (math.isfinite(cost) and cost >= 0):
            raise SweepConfigError(
                f"{type(self).__name__}.observe: cost must be finite and >= 0, got {cost}; "
                "report the run's time or steps as its cost"
            )
        failed = score is None or not math.isfinite(score)
        signed = math.nan if failed else (score if self.goal == "maximize" else -score)
        self._x.append(self.space.normalize(params))
        self._score.append(float(signed))  # type: ignore[arg-type]
        self._cost.append(float(cost))
        self._failed.append(failed)
        return failed

    @property
    def num_observations(self) -> int:
        """Observations recorded, learning-curve points and failures included."""
        return len(self._x)

    def observations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All observations: x (n, d) float64 in [-1, 1], score (n,) to maximize (NaN for
        failures), cost (n,) and failed (n,) bool."""
        d = len(self.space)
        x = np.asarray(self._x, dtype=np.float64).reshape(-1, d)
        return x, np.asarray(self._score), np.asarray(self._cost), np.asarray(self._failed, bool)

    def _uniform(self) -> np.ndarray:
        return self.rng.uniform(-1.0, 1.0, size=len(self.space))


class Random(Method):
    """Uniform random search over the normalized space (log-uniform on a log scale).

    Example:
        >>> from puffer.sweep.space import Param, Scale
        >>> method = Random(Space([Param("lr", Scale.LOG, 1e-4, 1e-1)]), seed=0)
        >>> params = method.suggest()
        >>> method.observe(params, score=0.5, cost=1.0)
        >>> method.num_observations
        1
    """

    def _suggest(self) -> Params:
        return self.space.denormalize(self._uniform())


class ParetoGenetic(Method):
    """Mutates a random member of the score/cost Pareto front; random until it has one.

    Args:
        space: The searched parameters.
        goal: "maximize" or "minimize" the score.
        seed: Seed of the method's random draws.
        num_warmup: Successful runs (not learning-curve points) with random suggestions before
            mutating the front.
        mutation_scale: Standard deviation of the Gaussian mutation, in normalized units.
    """

    def __init__(
        self,
        space: Space,
        *,
        goal: Literal["maximize", "minimize"] = "maximize",
        seed: int = 0,
        num_warmup: int = 10,
        mutation_scale: float = 0.2,
    ) -> None:
        super().__init__(space, goal=goal, seed=seed)
        self.num_warmup = num_warmup
        self.mutation_scale = mutation_scale

    def _suggest(self) -> Params:
        if self.num_ok_runs < self.num_warmup:
            return self.space.denormalize(self._uniform())
        x, score, cost, failed = self.observations()
        ok = np.flatnonzero(~failed)
        front = ok[pareto_front(score[ok], cost[ok])]
        parent = x[self.rng.choice(front)]
        child = parent + self.rng.normal(0.0, self.mutation_scale, size=parent.shape)
        return self.space.denormalize(np.clip(child, -1.0, 1.0))
