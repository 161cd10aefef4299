"""Emulation overhead: steps/s of raw Gymnasium CartPole-v1 vs GymnasiumPufferEnv over it.

Measures agent steps per second of one env on one core, the same seeded random action
sequence for both, auto-reset included (the raw loop calls `reset()` on episode end as the
emulated env does inside `step`). Rates are steps per second of this thread's CPU time, so
other processes on a busy machine slow neither side; wall-clock rates are printed beside them.
Raw and emulated runs alternate, `--repeats` times each; we print the median of each and
their ratio (target: emulated >= 0.8x raw). Two emulated modes:
`step(actions)` with a fresh int32 array (checked and copied), and the vectorizer's path of
writing `env.actions` in place and calling `step(env.actions)`.

Recommended: an idle machine, `--steps 100000 --repeats 7`. Run:

    uv run python benchmarks/emulation.py
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import numpy as np

from puffer.cli.bench import Rate, header, timed
from puffer.core import GymnasiumPufferEnv


def raw_rate(actions: list[int], seed: int) -> Rate:
    env = gymnasium.make("CartPole-v1")
    env.reset(seed=seed)
    step, reset = env.step, env.reset

    def run() -> int:
        for action in actions:
            _, _, terminated, truncated, _ = step(action)
            if terminated or truncated:
                reset()
        return len(actions)

    rate = timed(run, cpu_clock=time.thread_time)
    env.close()
    return rate


def emulated_rate(actions: list[np.ndarray], seed: int) -> Rate:
    env = GymnasiumPufferEnv("CartPole-v1")
    env.reset(seed=seed)
    step = env.step

    def run() -> int:
        for action in actions:
            step(action)
        return len(actions)

    rate = timed(run, cpu_clock=time.thread_time)
    env.close()
    return rate


def in_place_rate(actions: list[int], seed: int) -> Rate:
    env = GymnasiumPufferEnv("CartPole-v1")
    env.reset(seed=seed)
    step, row = env.step, env.actions

    def run() -> int:
        for action in actions:
            row[0] = action
            step(row)
        return len(actions)

    rate = timed(run, cpu_clock=time.thread_time)
    env.close()
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000, help="steps per timed run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per mode")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    ints = [int(a) for a in rng.integers(0, 2, args.steps)]
    arrays = [np.array([a], np.int32) for a in ints]
    timers: dict[str, list[Rate]] = {"raw": [], "emulated": [], "emulated in place": []}
    for _ in range(args.repeats):  # alternate, so load drift hits every mode alike
        timers["raw"].append(raw_rate(ints, args.seed))
        timers["emulated"].append(emulated_rate(arrays, args.seed))
        timers["emulated in place"].append(in_place_rate(ints, args.seed))

    print(f"{header('numpy', 'gymnasium', 'puffer-core')}; GPU: none used")
    print(
        f"CartPole-v1, {args.steps} steps x {args.repeats} repeats, median agent steps per "
        "CPU-second (per wall-second):"
    )
    raw_cpu = statistics.median(t.per_cpu for t in timers["raw"])
    raw_wall = statistics.median(t.per_wall for t in timers["raw"])
    for mode, runs in timers.items():
        cpu = statistics.median(t.per_cpu for t in runs)
        wall = statistics.median(t.per_wall for t in runs)
        print(
            f"  {mode:<18} {cpu:>9,.0f}  {cpu / raw_cpu:.2f}x raw   "
            f"({wall:>9,.0f}  {wall / raw_wall:.2f}x raw)"
        )


if __name__ == "__main__":
    main()
