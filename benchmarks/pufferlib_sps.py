"""Agent steps/s of one PufferLib 3.0 Ocean env, run with PufferLib's own Python.

Started by `benchmarks/ocean.py --pufferlib DIR` in a scratch directory (importing PufferLib
creates ./resources there); imports nothing of ours. The loop is the one ocean.py times for our
envs: 16 pre-sampled random action arrays, cycled through the env's public `step`, one thread.

    DIR/venv/bin/python benchmarks/pufferlib_sps.py breakout --num-envs 1024 --seconds 2
Prints one JSON line: {"env", "num_agents", "sps"} (the median of --repeats timed runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from pufferlib.ocean.environment import env_creator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("env")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--config", default="{}", help="JSON of env kwargs beyond num_envs")
    args = parser.parse_args()
    env = env_creator("puffer_" + args.env)(num_envs=args.num_envs, **json.loads(args.config))
    env.reset(seed=0)
    space = env.single_action_space
    pool = [np.array([space.sample() for _ in range(env.num_agents)]) for _ in range(16)]

    def rate(seconds: float) -> float:
        start, steps = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            env.step(pool[steps % 16])
            steps += 1
        return steps * env.num_agents / (time.perf_counter() - start)

    rate(0.5)  # warm-up
    sps = statistics.median(rate(args.seconds) for _ in range(args.repeats))
    print(json.dumps({"env": args.env, "num_agents": env.num_agents, "sps": sps}))


if __name__ == "__main__":
    main()
