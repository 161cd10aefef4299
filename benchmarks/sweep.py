"""Cost-aware hyperparameter search: Protein against Random, ParetoGenetic and Optuna's TPE.

What it measures: on synthetic tasks where both the score and the cost of a run depend on its
hyperparameters, how many runs and how much total cost (sum over every run so far, in the task's
cost unit) each method spends before one run reaches 95% of the best achievable score; medians
over seeds. Also the wall-clock time of one ``suggest()`` call (seconds), and Protein's
``suggest()`` time with 500 observations.

Tasks (the optimum moves with the seed, so no method is helped by a lucky default):
  bowl      5 params: a quadratic bowl over lr/gamma/ent, plus steps and width that raise the
            score with diminishing returns and multiply the cost.
  curve     4 params: score(t) = A(params) * (1 - exp(-t / tau(params))), a learning curve;
            each run reports 8 points of its curve. Protein learns from the curve
            (``observe_curve``); the others see each run's final score, as they are built to.
  hartmann  4 params: the Hartmann-3 function (mirrored per seed) times a steps factor; the
            cost grows with steps and with one of the scored parameters.
  mixed     5 params, continuous + integer + categorical: lr and gamma (a bowl whose lr optimum
            moves with the layer count), layers (int 1-8, best value per seed), activation
            (categorical, 5 values, a per-seed penalty each), steps (raise the score, multiply
            the cost with the layers).

Also, on ``mixed``: the best true score of Protein and of Random after 30 runs, per seed, and
the number of seeds Protein wins (``--compare-runs``).

Recommended: ``uv run python benchmarks/sweep.py`` (10 seeds, about 10 minutes on 2 cores);
``--seeds 3 --tasks bowl`` for a quick look; ``--compare-only`` for the mixed-task comparison
alone (10 seeds x 30 runs, a few minutes). Torch runs single-threaded.
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import optuna
import torch

from puffer.cli.bench import header
from puffer.sweep import Method, ParetoGenetic, Protein, Random, Space, parse_sweep_config

TARGET = 0.95  # fraction of the best achievable score a run must reach
NOISE = 0.005  # std of the Gaussian noise on observed scores (the target uses the true score)


@dataclass
class Task:
    """A synthetic sweep problem: its space and a seeded evaluation function."""

    name: str
    space: Space
    # (normalized params, seed) -> (true score, cost, curve of (steps, true score, cost) or [])
    evaluate: Callable[[dict, np.ndarray], tuple[float, float, list]]
    best: float


def _bowl(seed: int) -> Task:
    space = parse_sweep_config(
        {
            "lr": {"distribution": "log", "min": 1e-5, "max": 1e-1},
            "gamma": {"distribution": "logit", "min": 0.8, "max": 0.9999},
            "ent": {"distribution": "log", "min": 1e-5, "max": 1e-1},
            "width": {"distribution": "pow2", "min": 32, "max": 1024},
            "steps": {"distribution": "log", "min": 1e5, "max": 1e8},
        }
    ).space
    opt = np.random.default_rng(1000 + seed).uniform(-0.7, 0.7, size=3)

    def evaluate(params: dict, x: np.ndarray) -> tuple[float, float, list]:
        loss = 0.35 * np.sum((x[:3] - opt) ** 2)
        loss += 0.3 * math.exp(-2.5 * (x[4] + 1)) + 0.1 * math.exp(-2.0 * (x[3] + 1))
        cost = params["steps"] / 1e5 * (0.5 + params["width"] / 1024)
        return 1.0 - loss, cost, []

    best = 1.0 - 0.3 * math.exp(-5.0) - 0.1 * math.exp(-4.0)
    return Task("bowl", space, evaluate, best)


def _curve(seed: int) -> Task:
    space = parse_sweep_config(
        {
            "lr": {"distribution": "log", "min": 1e-5, "max": 1e-1},
            "gamma": {"distribution": "logit", "min": 0.8, "max": 0.9999},
            "batch": {"distribution": "pow2", "min": 64, "max": 4096},
            "steps": {"distribution": "log", "min": 1e5, "max": 1e8},
            "steps_key": "steps",
        }
    ).space
    opt = np.random.default_rng(2000 + seed).uniform(-0.6, 0.6, size=3)

    def score_at(x: np.ndarray, t: float) -> float:
        asymptote = 1.0 - 0.6 * np.sum((x[:2] - opt[:2]) ** 2) - 0.2 * (x[2] - opt[2]) ** 2
        tau = 3e6 * math.exp(-0.8 * x[0])  # a larger learning rate learns faster
        return float(asymptote * (1.0 - math.exp(-t / tau)))

    def evaluate(params: dict, x: np.ndarray) -> tuple[float, float, list]:
        per_step = math.sqrt(params["batch"] / 1024) / 1e5
        steps = params["steps"]
        curve = [
            (steps * k / 8, score_at(x, steps * k / 8), steps * k / 8 * per_step)
            for k in range(1, 9)
        ]
        return curve[-1][1], curve[-1][2], curve

    # The asymptote peaks at 1 with tau <= 6.7e6, so 1e8 steps leave 1 - exp(-15) of it.
    xs = np.array([*opt[:2], opt[2]])
    return Task("curve", space, evaluate, score_at(xs, 1e8))


_H3_A = np.array([[3.0, 10, 30], [0.1, 10, 35], [3.0, 10, 30], [0.1, 10, 35]])
_H3_C = np.array([1.0, 1.2, 3.0, 3.2])
_H3_P = 1e-4 * np.array(
    [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]
)
_H3_MAX = 3.86278


def _hartmann(seed: int) -> Task:
    space = parse_sweep_config(
        {
            "u0": {"distribution": "linear", "min": 0.0, "max": 1.0},
            "u1": {"distribution": "linear", "min": 0.0, "max": 1.0},
            "u2": {"distribution": "linear", "min": 0.0, "max": 1.0},
            "steps": {"distribution": "log", "min": 1e5, "max": 1e8},
        }
    ).space
    mirror = np.random.default_rng(3000 + seed).integers(0, 2, size=3).astype(bool)

    def evaluate(params: dict, x: np.ndarray) -> tuple[float, float, list]:
        u = np.array([params["u0"], params["u1"], params["u2"]])
        u = np.where(mirror, 1.0 - u, u)
        h3 = float(np.sum(_H3_C * np.exp(-np.sum(_H3_A * (u - _H3_P) ** 2, axis=1))))
        steps_factor = 1.0 - 0.4 * math.exp(-params["steps"] / 2e6)
        cost = params["steps"] / 1e5 * (1.0 + 2.0 * params["u0"])
        return h3 / _H3_MAX * steps_factor, cost, []

    return Task("hartmann", space, evaluate, 1.0 - 0.4 * math.exp(-50.0))


ACTIVATIONS = ("relu", "tanh", "gelu", "elu", "silu")


def _mixed(seed: int) -> Task:
    space = parse_sweep_config(
        {
            "lr": {"distribution": "log", "min": 1e-5, "max": 1e-1},
            "gamma": {"distribution": "logit", "min": 0.8, "max": 0.9999},
            "layers": {"distribution": "int", "min": 1, "max": 8},
            "activation": {"distribution": "categorical", "values": list(ACTIVATIONS)},
            "steps": {"distribution": "log", "min": 1e5, "max": 1e8},
        }
    ).space
    rng = np.random.default_rng(4000 + seed)
    opt = rng.uniform(-0.7, 0.7, size=2)
    best_layers = int(rng.integers(1, 9))
    penalty = dict(zip(ACTIVATIONS, rng.permutation([0.0, 0.06, 0.1, 0.14, 0.2]), strict=True))

    def evaluate(params: dict, x: np.ndarray) -> tuple[float, float, list]:
        # Deeper nets want a smaller learning rate: the lr optimum moves with the layer count.
        lr_opt = opt[0] - 0.08 * (params["layers"] - best_layers)
        loss = 0.35 * ((x[0] - lr_opt) ** 2 + (x[1] - opt[1]) ** 2)
        loss += 0.02 * (params["layers"] - best_layers) ** 2 + penalty[params["activation"]]
        loss += 0.3 * math.exp(-2.5 * (x[4] + 1))
        cost = params["steps"] / 1e5 * (0.5 + params["layers"] / 8)
        return 1.0 - loss, cost, []

    return Task("mixed", space, evaluate, 1.0 - 0.3 * math.exp(-5.0))


TASKS = {"bowl": _bowl, "curve": _curve, "hartmann": _hartmann, "mixed": _mixed}


class _TPE(Method):
    """Optuna's TPE over the same normalized coordinates, behind the ask/tell interface."""

    def __init__(self, space: Space, seed: int) -> None:
        super().__init__(space, seed=seed)
        sampler = optuna.samplers.TPESampler(seed=seed)
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        self._trials: list[optuna.trial.Trial] = []

    def _suggest(self) -> dict:
        trial = self.study.ask()
        self._trials.append(trial)
        x = np.array([trial.suggest_float(n, -1.0, 1.0) for n in self.space.names])
        return self.space.denormalize(x)

    def observe(self, params: dict, score: float | None, cost: float) -> None:
        super().observe(params, score, cost)
        self.study.tell(self._trials.pop(0), score)


def _make(name: str, space: Space, seed: int) -> Method:
    if name == "protein":
        return Protein(space, seed=seed)
    if name == "random":
        return Random(space, seed=seed)
    if name == "genetic":
        return ParetoGenetic(space, seed=seed)
    return _TPE(space, seed)


def _runs(task: Task, method_name: str, seed: int, max_runs: int) -> Iterator[tuple]:
    """Yields (true score, cost, suggest() seconds) of each run of one sweep, in order."""
    method = _make(method_name, task.space, seed)
    noise = np.random.default_rng(seed + 77)
    for _ in range(max_runs):
        start = time.perf_counter()
        params = method.suggest()
        seconds = time.perf_counter() - start
        score, cost, curve = task.evaluate(params, task.space.normalize(params))
        yield score, cost, seconds
        if curve and isinstance(method, Protein):
            method.observe_curve(
                params, [(s, v + noise.normal(0.0, NOISE), c) for s, v, c in curve]
            )
        else:
            method.observe(params, score + noise.normal(0.0, NOISE), cost)


def run_one(task: Task, method_name: str, seed: int, max_runs: int) -> dict:
    """One sweep until a run reaches TARGET * best (or max_runs); returns runs, cost, times."""
    total = 0.0
    times = []
    for run, (score, cost, seconds) in enumerate(_runs(task, method_name, seed, max_runs), 1):
        total += cost
        times.append(seconds)
        if score >= TARGET * task.best:
            return {"runs": run, "cost": total, "reached": True, "times": times}
    return {"runs": max_runs, "cost": total, "reached": False, "times": times}


def best_after(task: Task, method_name: str, seed: int, runs: int) -> float:
    """The best true score of a sweep of ``runs`` runs."""
    return max(score for score, _, _ in _runs(task, method_name, seed, runs))


def compare_best(seeds: int, runs: int, peer: str = "random") -> int:
    """Prints, per seed, the best score of Protein and of ``peer`` after ``runs`` runs on the
    mixed task (continuous + int + categorical); returns the seeds Protein wins."""
    print(f"\nmixed: best true score after {runs} runs (of {_mixed(0).best:.3f} achievable)")
    print(f"  {'seed':>4} {'protein':>8} {peer:>8}  winner")
    wins = 0
    for seed in range(seeds):
        ours = best_after(_mixed(seed), "protein", seed, runs)
        theirs = best_after(_mixed(seed), peer, seed, runs)
        wins += ours > theirs
        print(f"  {seed:>4} {ours:>8.4f} {theirs:>8.4f}  {'protein' if ours > theirs else peer}")
    print(f"  protein's best beats {peer}'s in {wins} of {seeds} seeds")
    return wins


def suggest_time_at(n: int, repeats: int = 5) -> list[float]:
    """Seconds per Protein.suggest() with n observations (after the first, warm-up fit)."""
    task = _bowl(0)
    protein = Protein(task.space, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(n):
        params = task.space.denormalize(rng.uniform(-1, 1, size=len(task.space)))
        score, cost, _ = task.evaluate(params, task.space.normalize(params))
        protein.observe(params, score, cost)
    protein.suggest()  # the first fit runs more Adam steps and warms up torch
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        params = protein.suggest()
        times.append(time.perf_counter() - start)
        score, cost, _ = task.evaluate(params, task.space.normalize(params))
        protein.observe(params, score, cost)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--max-runs", type=int, default=200)
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--methods", nargs="+", default=["protein", "random", "genetic", "tpe"])
    parser.add_argument(
        "--compare-runs",
        type=int,
        default=30,
        help="runs per sweep of the best-score comparison on the mixed task; 0 skips it",
    )
    parser.add_argument(
        "--compare-only", action="store_true", help="run the best-score comparison only"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    optuna.logging.set_verbosity(logging.WARNING)
    print(header("torch", "optuna"))
    print(
        f"target: {TARGET:.0%} of the best score; medians over {args.seeds} seeds; a sweep that"
        f" never reaches it within {args.max_runs} runs counts all its runs (marked *)"
    )
    if args.compare_runs:
        compare_best(args.seeds, args.compare_runs)
    if args.compare_only:
        return
    ratios: dict[str, dict[str, float]] = {}
    for task_name in args.tasks:
        print(
            f"\n{task_name}: {'method':<8} {'runs':>6} {'cost':>10} {'reached':>8} "
            f"{'suggest s':>10}"
        )
        medians = {}
        for method_name in args.methods:
            results = [
                run_one(TASKS[task_name](s), method_name, s, args.max_runs)
                for s in range(args.seeds)
            ]
            runs = statistics.median(r["runs"] for r in results)
            cost = statistics.median(r["cost"] for r in results)
            reached = sum(r["reached"] for r in results)
            per_call = statistics.median(t for r in results for t in r["times"])
            medians[method_name] = cost
            mark = "" if reached == len(results) else "*"
            print(
                f"{'':{len(task_name) + 1}} {method_name:<8} {runs:>6.0f} {cost:>10.0f}{mark:1}"
                f" {reached:>5}/{len(results):<2} {per_call:>10.4f}"
            )
        if "protein" in medians:
            ratios[task_name] = {
                m: medians["protein"] / c for m, c in medians.items() if m != "protein"
            }
            print(
                "  protein cost / peer cost: "
                + ", ".join(f"{m} {r:.2f}x" for m, r in ratios[task_name].items())
            )
    times = suggest_time_at(500)
    print(
        f"\nProtein.suggest() at 500 observations: median {statistics.median(times):.3f} s "
        f"(max {max(times):.3f} s over {len(times)} calls)"
    )


if __name__ == "__main__":
    main()
