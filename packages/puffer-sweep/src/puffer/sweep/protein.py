"""Protein: cost-aware Bayesian search over the score/cost Pareto front.

One suggestion, after the warm-up:

    observations -> GP(score), GP(log cost)          refit, a few warm-started Adam steps
    Pareto front of (score up, cost down) -> candidates = front members + Gaussian steps
    each candidate rounded, plus its neighbours      int/pow2: the grid value on the other side;
                                                     categorical: every other value
    target ~ U(0, 1 + expansion_rate)                 a cost level, as a fraction of the seen range
    acquisition = ucb_norm * (1 - |cost_norm - target|), candidates over max_cost excluded
    suggestion = argmax acquisition

Drawing the target cost at random makes the sweep walk the whole front: cheap runs early tell it
where good regions are at a fraction of the price, expensive runs refine the best of them.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import torch

from puffer.sweep.gp import GP
from puffer.sweep.methods import Method, pareto_front
from puffer.sweep.space import Params, Space

__all__ = ["Protein"]


class Protein(Method):
    """Cost-aware Bayesian hyperparameter search with two Gaussian processes.

    The first suggestion is the space's default (every ``mean``); then ``num_warmup`` scrambled
    Sobol points; then model-based suggestions (see the module docstring). Failed runs enter the
    score GP at the worst score seen, which steers suggestions away from them.

    Args:
        space: The searched parameters.
        goal: "maximize" or "minimize" the score.
        seed: Seed of every random draw (Sobol scrambling, candidates, target costs).
        max_cost: Cap on a run's predicted cost; None for no cap.
        num_warmup: Successful runs (not learning-curve points) before the GPs take over; None
            picks max(5, d // 2 + 2).
        num_candidates: Candidates scored by the acquisition per suggestion.
        search_scale: Largest standard deviation of the steps around front members, in
            normalized units; each candidate draws its own scale log-uniformly below it.
        expansion_rate: How far past the most expensive run seen the target cost may go, as a
            fraction of the log-cost range.
        kappa: Weight of the score GP's standard deviation in the upper confidence bound.
        gp_max_points: Most observations a GP is fit on; past it the front, the best scores and
            a random sample are kept, which bounds the time of `suggest`.
        gp_tune_points: Most observations the GP hyperparameters are tuned on (a random
            subset of the fitted ones); the posterior still uses all of them.
        gp_steps: Adam steps per refit after the first fit.

    Example:
        >>> from puffer.sweep.space import Param, Scale
        >>> space = Space([Param("x", Scale.LINEAR, 0.0, 1.0), Param("n", Scale.POW2, 1, 64)])
        >>> protein = Protein(space, seed=0, num_warmup=3)
        >>> for _ in range(5):
        ...     p = protein.suggest()
        ...     protein.observe(p, score=-((p["x"] - 0.3) ** 2), cost=float(p["n"]))
        >>> sorted(protein.suggest())
        ['n', 'x']
    """

    def __init__(
        self,
        space: Space,
        *,
        goal: Literal["maximize", "minimize"] = "maximize",
        seed: int = 0,
        max_cost: float | None = None,
        num_warmup: int | None = None,
        num_candidates: int = 512,
        search_scale: float = 0.3,
        expansion_rate: float = 0.25,
        kappa: float = 0.5,
        gp_max_points: int = 256,
        gp_tune_points: int = 96,
        gp_steps: int = 15,
    ) -> None:
        super().__init__(space, goal=goal, seed=seed)
        self.max_cost = max_cost
        self.num_warmup = max(5, len(space) // 2 + 2) if num_warmup is None else num_warmup
        self.num_candidates = num_candidates
        self.search_scale = search_scale
        self.expansion_rate = expansion_rate
        self.kappa = kappa
        self.gp_max_points = gp_max_points
        self.gp_tune_points = gp_tune_points
        self._score_gp = GP(space.num_features, steps=gp_steps)
        self._cost_gp = GP(space.num_features, steps=gp_steps)
        self._sobol = torch.quasirandom.SobolEngine(len(space), scramble=True, seed=seed)

    def _suggest(self) -> Params:
        if self._num_suggested == 1:
            return self.space.default()
        if self.num_ok_runs < self.num_warmup:
            return self._warmup()
        return self.space.denormalize(self._model_suggestion())

    def _warmup(self) -> Params:
        # Sobol index i is handed out as the (i + 2)-th suggestion: the first is the default.
        behind = self._num_suggested - 2 - self._sobol.num_generated
        if behind > 0:
            self._sobol.fast_forward(behind)
        u = self._sobol.draw(1, dtype=torch.float64)[0].numpy()
        return self.space.denormalize(2.0 * u - 1.0)

    def _subset(self, keep: np.ndarray, score: np.ndarray, n: int) -> np.ndarray:
        """Indices (into 0..n-1) the GPs are fit on: all of them, or at most gp_max_points made
        of ``keep`` (the front), the best scores, then a random sample."""
        if n <= self.gp_max_points:
            return np.arange(n)
        chosen = list(dict.fromkeys(keep.tolist()))
        best = np.argsort(-np.nan_to_num(score, nan=-np.inf))[: self.gp_max_points // 4]
        chosen = list(dict.fromkeys(chosen + best.tolist()))[: self.gp_max_points]
        rest = np.setdiff1d(np.arange(n), chosen)
        extra = self.rng.choice(rest, size=self.gp_max_points - len(chosen), replace=False)
        return np.concatenate([np.asarray(chosen, dtype=np.int64), extra])

    def _tune_rows(self, n: int) -> np.ndarray | None:
        """Rows the GP hyperparameters are tuned on: all, or a random gp_tune_points of them."""
        if n <= self.gp_tune_points:
            return None
        return np.sort(self.rng.choice(n, size=self.gp_tune_points, replace=False))

    def _model_suggestion(self) -> np.ndarray:
        x, score, cost, failed = self.observations()
        ok = np.flatnonzero(~failed)
        worst = float(np.min(score[ok]))
        y = np.where(failed, worst, score)
        # A run reported as free would send log(cost) to -inf; floor it below the cheapest run.
        positive = cost[cost > 0]
        floor = float(positive.min()) * 0.1 if positive.size else 1.0
        log_cost = np.log(np.maximum(cost, floor))

        front = ok[pareto_front(score[ok], cost[ok])]
        fit = self._subset(front, np.where(failed, np.nan, score), len(y))
        features = self.space.features(x)
        self._score_gp.fit(features[fit], y[fit], self._tune_rows(len(fit)))
        fit_ok = fit[~failed[fit]]
        self._cost_gp.fit(features[fit_ok], log_cost[fit_ok], self._tune_rows(len(fit_ok)))

        # Discrete parameters are searched in the continuous latent, then each candidate is
        # scored at its rounded value and at the neighbouring grid values: an integer moves a
        # step, or a category changes, when the acquisition prefers it.
        candidates = self.space.neighbours(self._candidates(x[front]))
        mean, std = self._score_gp.predict(self.space.features(candidates))
        cost_mean, cost_std = self._cost_gp.predict(self.space.features(candidates))
        ucb = mean + self.kappa * std
        ucb_norm = (ucb - ucb.min()) / max(float(np.ptp(ucb)), 1e-12)
        lo, hi = float(log_cost[ok].min()), float(log_cost[ok].max())
        target = self.rng.uniform(0.0, 1.0 + self.expansion_rate)
        acquisition = ucb_norm.copy()
        # Every run costing the same gives no cost range to aim in (and dividing the GP's
        # rounding error by it would swamp the score): then the score alone decides.
        if hi - lo > 1e-9:
            cost_norm = (cost_mean - lo) / (hi - lo)
            acquisition *= 1.0 - np.abs(cost_norm - target)
        if self.max_cost is not None:
            over = cost_mean > math.log(self.max_cost)
            if over.all():
                # Nothing seen so far is under the cap: go where the cost could be lowest
                # (two standard deviations down), which leads away from what was tried.
                return candidates[int(np.argmin(cost_mean - 2.0 * cost_std))]
            acquisition[over] = -np.inf
        return candidates[int(np.argmax(acquisition))]

    def _candidates(self, centres: np.ndarray) -> np.ndarray:
        """num_candidates points of the continuous latent (not snapped): most are Gaussian steps
        from front members, with scales drawn log-uniformly in [search_scale / 20,
        search_scale]; an eighth are uniform, so regions far from the front keep a chance."""
        d = centres.shape[1]
        n_uniform = self.num_candidates // 8
        n_local = self.num_candidates - n_uniform
        parents = centres[self.rng.integers(len(centres), size=n_local)]
        scales = self.search_scale * np.exp(self.rng.uniform(np.log(0.05), 0.0, size=(n_local, 1)))
        local = np.clip(parents + scales * self.rng.standard_normal((n_local, d)), -1.0, 1.0)
        uniform = self.rng.uniform(-1.0, 1.0, size=(n_uniform, d))
        return np.concatenate([local, uniform])
