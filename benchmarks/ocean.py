"""Ocean throughput: random-policy agent steps per second of each C env.

For every env, at 1, 64 and 1,024 env instances, with one thread and with all threads
(`os.cpu_count()`), we time a loop that copies one of 16 pre-generated random action arrays into
the bound `env.actions` (so drawing random numbers is not what is measured) and steps. Two
loops are timed, in alternation:

- `binding`: `np.copyto(env.actions, pool[i]); env._c.step()` - the C step through the pybind11
  binding, the figure the issue's speed targets refer to; it includes the binding's check of
  every action (range for discrete, finiteness for continuous);
- `unchecked`: the same loop through `env._c._step_unchecked()`, the step without that check,
  timed in alternation with `binding`; the `check` column is the cost of the action check,
  1 - binding / unchecked in steps per CPU second (robust to a loaded machine);
- `step`: `np.copyto(...); env.step(env.actions)` - the public PufferEnv call, adding its Python
  overhead (checks, log collection every `log_interval` steps).

A third column, `cpu`, is the `binding` loop's steps per CPU second of this process
(`time.process_time`): on a loaded machine it shows the single-thread rate while running, where
wall-clock time also counts waiting for a core (for several threads it is not a speed-up).

Unit: agent steps per second (snake counts every snake; breakout's one step is 4 frames).
Each figure is the median of `--repeats` runs of at least `--seconds` each. The named peer is
Gymnasium's own vectorized CartPole (`gymnasium.make_vec("CartPole-v1", vectorization_mode=
"vector_entry_point")`, numpy), timed the same way at the same sizes; its ratio is printed on the
cartpole rows. Recommended: an idle machine, `--repeats 5 --seconds 0.5`. Run:

    uv run python benchmarks/ocean.py
    uv run python benchmarks/ocean.py --envs breakout --sizes 1024

With `--pufferlib DIR` (a PufferLib 3.0 install: DIR/venv/bin/python or DIR/bin/python) it
instead compares each env that shares a name with a PufferLib 3.0 Ocean env, like for like:
1,024 agents, one thread, their defaults on both sides, the same loop through each side's
public `step` (16 pre-sampled random action arrays, cycled); theirs runs in a child process with
their Python (`peers.pufferlib_sps`), alternating with ours. It prints both rates and
ours / theirs:

    uv run python benchmarks/ocean.py --pufferlib /work/pl3 --repeats 3 --seconds 2
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable
from pathlib import Path

import gymnasium
import numpy as np
from peers import gymnasium_vector, pufferlib_python, pufferlib_sps

import puffer.core
import puffer.ocean
from puffer.cli.bench import header, timed

ENVS = list(puffer.ocean.ENVS)  # every C env the binding was built with
POOL = 16  # pre-generated action arrays, cycled
AGENTS = 1024  # the comparison with PufferLib 3.0
# Every env that shares a name and its rules with one of PufferLib 3.0's.
SHARED = ["breakout", "pong", "squared", "cartpole", "snake", "target", "connect4", "tetris"]
SHARED += ["trash_pickup", "tripletriad", "checkers", "go", "drone", "freeway", "blastar"]
SHARED += ["cpr", "pacman", "boids", "convert", "rware", "grid", "terraform", "school"]
SHARED += ["tower_climb", "enduro"]
# Env instances (ours, theirs) for 1,024 agents where an instance holds several by default;
# every other env is 1,024 instances of one agent.
INSTANCES = {
    "snake": (4, 4),  # 256 snakes each
    "target": (128, 128),  # 8 agents each
    "cpr": (128, 128),  # 8 agents each
    "terraform": (128, 128),  # 8 dozers each
    "rware": (256, 256),  # 4 robots each
    "convert": (1, 1),  # 1,024 agents
    "school": (2, 2),  # 512 units each
    "trash_pickup": (341, 341),  # 3 agents each: 1,023 agents
    "tower_climb": (16, 1024),  # ours: 64 climbers each
}
# Their kwargs where their Python defaults differ from their .ini, which ours follow: school's
# Python defaults (4 armies in a 2 x 2 x 2 box) never finish placing the bases.
PUFFERLIB_CONFIG = {
    "school": {"num_agents": 512, "num_armies": 2, "size_x": 2, "size_y": 2, "size_z": 2}
}


def action_pool(space: gymnasium.Space, shape: tuple[int, ...], seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if isinstance(space, gymnasium.spaces.Discrete):
        return rng.integers(0, space.n, (POOL, *shape), dtype=np.int32)
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return rng.integers(0, space.nvec, (POOL, *shape), dtype=np.int32)
    return rng.uniform(-1.0, 1.0, (POOL, *shape)).astype(np.float32)


def pool_pass(step: Callable[[np.ndarray], object], pool: np.ndarray, agents: int):
    """A `timed` step: `step(actions)` once per pool entry, returning the agent steps done (the
    clock is read once per pass, not per env step)."""

    def one_pass() -> int:
        for actions in pool:
            step(actions)
        return len(pool) * agents

    return one_pass


def ocean_rates(name: str, num_envs: int, threads: int, args: argparse.Namespace) -> dict:
    env = puffer.core.make(name, num_envs=num_envs, num_threads=threads)
    env.reset(seed=0)
    pool = action_pool(env.single_action_space, env.actions.shape, seed=1)
    actions, native_step, native_unchecked = env.actions, env._c.step, env._c._step_unchecked

    def binding(pooled: np.ndarray) -> None:
        np.copyto(actions, pooled)
        native_step()

    def unchecked(pooled: np.ndarray) -> None:
        np.copyto(actions, pooled)
        native_unchecked()

    def public(pooled: np.ndarray) -> None:
        np.copyto(actions, pooled)
        env.step(actions)

    rates: dict[str, list[float]] = {
        "binding": [],
        "cpu": [],
        "step": [],
        "unchecked": [],
        "unchecked_cpu": [],
    }
    for _ in range(args.repeats):
        rate = timed(pool_pass(binding, pool, env.num_agents), args.seconds)
        rates["binding"].append(rate.per_wall)
        rates["cpu"].append(rate.per_cpu)
        rate = timed(pool_pass(unchecked, pool, env.num_agents), args.seconds)
        rates["unchecked"].append(rate.per_wall)
        rates["unchecked_cpu"].append(rate.per_cpu)
        rates["step"].append(timed(pool_pass(public, pool, env.num_agents), args.seconds).per_wall)
    env.close()
    return {key: statistics.median(values) for key, values in rates.items()}


def gymnasium_rate(num_envs: int, args: argparse.Namespace) -> float:
    step, close = gymnasium_vector("CartPole-v1", num_envs, "vector_entry_point", seed=1)
    try:
        return statistics.median(timed(step, args.seconds).per_wall for _ in range(args.repeats))
    finally:
        close()


def public_rate(name: str, args: argparse.Namespace) -> tuple[float, int]:
    """Our env's public `step` loop at 1,024 agents, one thread: (median agent steps/s, agents)."""
    env = puffer.core.make(name, num_envs=INSTANCES.get(name, (AGENTS,))[0], num_threads=1)
    env.reset(seed=0)
    pool = action_pool(env.single_action_space, env.actions.shape, seed=1)
    one_pass = pool_pass(env.step, pool, env.num_agents)
    rate = statistics.median(timed(one_pass, args.seconds).per_wall for _ in range(args.repeats))
    agents = env.num_agents
    env.close()
    return rate, agents


def pufferlib_rate(name: str, python: Path, args: argparse.Namespace) -> tuple[float, int]:
    """Their env at 1,024 agents, one thread: (median agent steps/s, agents)."""
    num_envs = INSTANCES.get(name, (AGENTS, AGENTS))[1]
    config = PUFFERLIB_CONFIG.get(name, {})
    return pufferlib_sps(python, name, num_envs, args.seconds, args.repeats, config)


def compare_pufferlib(directory: str, args: argparse.Namespace) -> None:
    python = pufferlib_python(directory)
    names = [name for name in args.envs if name in SHARED]
    print(f"{header('numpy', 'puffer-ocean')}; PufferLib's python {python}")
    print(f"agent steps/s through each side's public step, {AGENTS} agents, 1 thread, median of")
    print(f"{args.repeats} runs of {args.seconds}s; M = 1e6")
    print(f"{'env':<12}{'agents':>8}{'ours':>10}{'PufferLib':>11}{'ratio':>8}{'load':>7}")
    for name in names:
        ours, agents = public_rate(name, args)
        theirs, their_agents = pufferlib_rate(name, python, args)
        # Equal on both sides; 1,024 up to a whole instance (trash_pickup's 3 agents: 1,023).
        assert agents == their_agents and AGENTS - 8 < agents <= AGENTS, (
            name,
            agents,
            their_agents,
        )
        print(
            f"{name:<12}{agents:>8}{ours / 1e6:>9.2f}M{theirs / 1e6:>10.2f}M"
            f"{ours / theirs:>7.2f}x{os.getloadavg()[0]:>7.2f}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", nargs="+", default=ENVS, choices=ENVS)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 64, 1024])
    parser.add_argument("--threads", nargs="+", type=int, default=sorted({1, os.cpu_count() or 1}))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument(
        "--pufferlib", metavar="DIR", help="compare with PufferLib 3.0 installed in DIR"
    )
    args = parser.parse_args()
    if args.pufferlib:
        compare_pufferlib(args.pufferlib, args)
        return

    print(header("numpy", "gymnasium", "puffer-ocean"))
    print("agent steps/s, median of", args.repeats, "runs; M = 1e6")
    print(
        f"{'env':<20}{'envs':>6}{'threads':>8}{'binding':>11}{'unchecked':>11}{'check':>8}"
        f"{'step':>11}{'cpu':>11}  peer"
    )
    one_thread: dict[tuple[str, int], float] = {}
    for name in args.envs:
        for size in args.sizes:
            for threads in args.threads:
                rates = ocean_rates(name, size, threads, args)
                peer = ""
                if threads == 1:
                    one_thread[name, size] = rates["binding"]
                    if name == "cartpole":
                        gym = gymnasium_rate(size, args)
                        ratio = rates["step"] / gym
                        peer = f"gymnasium vector CartPole {gym / 1e6:.2f}M, step/peer {ratio:.1f}x"
                elif (name, size) in one_thread:
                    peer = f"{rates['binding'] / one_thread[name, size]:.2f}x one thread"
                print(
                    f"{name:<20}{size:>6}{threads:>8}{rates['binding'] / 1e6:>10.2f}M"
                    f"{rates['unchecked'] / 1e6:>10.2f}M"
                    f"{1 - rates['cpu'] / rates['unchecked_cpu']:>+8.1%}"
                    f"{rates['step'] / 1e6:>10.2f}M{rates['cpu'] / 1e6:>10.2f}M  {peer}",
                    flush=True,
                )
    print(f"load at end={os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
