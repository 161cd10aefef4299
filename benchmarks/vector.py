"""Vectorization throughput: puffer.vector against Gymnasium's vector envs, same run.

Measures agent steps per second (SPS; one agent row stepped once = one step) with random
actions for:

- a raw loop: one Gymnasium env stepped in Python, reset by hand (the single-env rate);
- Gymnasium SyncVectorEnv and AsyncVectorEnv(shared_memory=True) (one process per env);
- puffer Serial, Multiprocessing sync (batch = all envs) and Multiprocessing async
  (EnvPool-style, batch_size = num_envs / 2),

at 8 and 64 envs, for CartPole-v1 and for a heavy env that burns about 100 µs of numpy per step
(`HeavyCartPole` below; all backends run the same Gymnasium env, puffer through
`GymnasiumPufferEnv`). It prints each rate as a ratio to Gymnasium AsyncVectorEnv and the
parallel efficiency SPS / (workers x single-env SPS). Then:

- oversubscription: Multiprocessing sync with 4 workers vs 2 workers on this machine;
- idle cost: CPU used by a vectorizer (parent and workers) over 5 s when (a) nobody calls it
  and (b) the parent waits in recv() on an env that sleeps 5 s;
- fault latency: time from SIGKILL of a worker to the WorkerError in recv().

Each figure is the median of --repeats runs of --seconds each; the load average is printed
before and after, since the machine may be shared. Recommended:

    uv run python benchmarks/vector.py                 # full run, about 5 minutes on 2 cores
    uv run python benchmarks/vector.py --quick         # 8 envs, 1 repeat: a smoke test
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import time
from collections.abc import Callable
from functools import partial

import gymnasium
import numpy as np
from peers import gymnasium_vector

from puffer.cli.bench import header, timed
from puffer.core import GymnasiumPufferEnv, WorkerError
from puffer.vector import Multiprocessing, make
from puffer.vector.testing import SleepyEnv

HEAVY_WORK = 6  # np.sin passes over 1024 floats per step: about 100 µs on this machine


class HeavyCartPole(gymnasium.Wrapper):
    """CartPole-v1 that burns `HEAVY_WORK` elementwise numpy passes per step (one core)."""

    def __init__(self) -> None:
        super().__init__(gymnasium.make("CartPole-v1"))
        self._input = np.linspace(0.0, 1.0, 1024)
        self._scratch = np.empty_like(self._input)

    def step(self, action):
        for _ in range(HEAVY_WORK):
            np.sin(self._input, out=self._scratch)
        return self.env.step(action)


def gym_creator(env_name: str) -> Callable[[], gymnasium.Env]:
    return (lambda: gymnasium.make("CartPole-v1")) if env_name == "cartpole" else HeavyCartPole


def puffer_creator(env_name: str) -> Callable[..., GymnasiumPufferEnv]:
    creator = gym_creator(env_name)

    def create(buf=None):
        return GymnasiumPufferEnv(creator, buf=buf)

    return create


def random_actions(n: int, shape: tuple[int, ...] = ()) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 2, size=(n, *shape)).astype(np.int32) for _ in range(64)]


def bench_raw(env_name: str, num_envs: int, seconds: float) -> float:
    env = gym_creator(env_name)()
    env.reset(seed=0)
    actions = random_actions(1024)[0]
    counter = iter(range(1 << 62))

    def step() -> int:
        _, _, terminated, truncated, _ = env.step(int(actions[next(counter) % 1024]))
        if terminated or truncated:
            env.reset()
        return 1

    return timed(step, seconds, warmup=20).per_wall


def bench_gymnasium(env_name: str, num_envs: int, seconds: float, asynchronous: bool) -> float:
    mode = "async" if asynchronous else "sync"
    step, close = gymnasium_vector(gym_creator(env_name), num_envs, mode)
    try:
        return timed(step, seconds, warmup=20).per_wall
    finally:
        close()


def bench_puffer(
    env_name: str, num_envs: int, seconds: float, backend: str, workers: int, batch: int
) -> float:
    vec = make(
        puffer_creator(env_name),
        num_envs,
        backend=backend,
        num_workers=workers,
        instances_per_recv=batch,
    )
    actions = random_actions(vec.agents_per_batch)
    counter = iter(range(1 << 62))
    try:
        vec.async_reset(seed=0)
        vec.recv()

        def step() -> int:
            vec.send(actions[next(counter) % 64])
            return len(vec.recv()[5])

        return timed(step, seconds, warmup=20).per_wall
    finally:
        vec.close()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of processes, from /proc (Linux)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def idle_cost(waiting_in_recv: bool) -> float:
    """Percent of one core used by parent + 2 workers over 5 s of waiting."""
    seconds = 5.0
    env_kwargs = {"seconds": seconds if waiting_in_recv else 0.0}
    vec = Multiprocessing(SleepyEnv, 2, num_workers=2, env_kwargs=env_kwargs)
    vec.reset(seed=0)
    pids = [os.getpid(), *vec.worker_pids]
    time.sleep(0.1)  # let the workers settle into their sleep phase

    def wait() -> int:
        if waiting_in_recv:
            vec.step(np.zeros(2, np.int32))  # the envs sleep `seconds`: the parent waits in recv
        else:
            time.sleep(seconds)
        return 1

    rate = timed(wait, cpu_clock=lambda: cpu_seconds(pids))
    vec.close()
    return 100 * rate.cpu / rate.wall


def kill_latency() -> float:
    """Seconds from SIGKILL of a worker to the WorkerError raised by recv()."""
    vec = Multiprocessing(SleepyEnv, 2, num_workers=2, env_kwargs={"seconds": 0.5})
    vec.reset(seed=0)
    vec.send(np.zeros(2, np.int32))
    start = time.perf_counter()
    os.kill(vec.worker_pids[1], signal.SIGKILL)
    try:
        vec.recv()
    except WorkerError:
        return time.perf_counter() - start
    finally:
        vec.close()
    raise AssertionError("recv() did not report the killed worker")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[8, 64])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="8 envs, 1 repeat, 0.5 s")
    args = parser.parse_args()
    if args.quick:
        args.envs, args.repeats, args.seconds = [8], 1, 0.5

    print(header("numpy", "gymnasium"))
    w, mp = args.workers, "multiprocessing"

    def median(fn: Callable[[], float]) -> float:
        return statistics.median(fn() for _ in range(args.repeats))

    results: dict[tuple[str, int, str], float] = {}
    for env_name in ("cartpole", "heavy"):
        for n in args.envs:
            methods: dict[str, Callable[[], float]] = {
                "raw loop": partial(bench_raw, env_name, n, args.seconds),
                "gymnasium sync": partial(bench_gymnasium, env_name, n, args.seconds, False),
                "gymnasium async": partial(bench_gymnasium, env_name, n, args.seconds, True),
                "puffer serial": partial(bench_puffer, env_name, n, args.seconds, "serial", n, n),
                "puffer mp sync": partial(bench_puffer, env_name, n, args.seconds, mp, w, n),
                "puffer mp async": partial(bench_puffer, env_name, n, args.seconds, mp, w, n // 2),
            }
            for method, fn in methods.items():
                results[env_name, n, method] = median(fn)
            peer, single = results[env_name, n, "gymnasium async"], results[env_name, n, "raw loop"]
            print(
                f"\n{env_name}, {n} envs, {w} workers (SPS, ratio to gymnasium async, "
                "parallel efficiency of the multiprocess ones)"
            )
            for method in methods:
                sps = results[env_name, n, method]
                line = f"  {method:16s} {sps:12,.0f} SPS  {sps / peer:6.2f}x"
                if method.startswith("puffer mp"):
                    line += f"  efficiency {sps / (w * single):5.2f}"
                print(line, flush=True)
            serial = results[env_name, n, "puffer serial"]
            print(
                f"  mp sync / serial {results[env_name, n, 'puffer mp sync'] / serial:.2f}x, "
                f"mp async / serial {results[env_name, n, 'puffer mp async'] / serial:.2f}x"
            )

    print(
        f"\noversubscription: Multiprocessing sync, 4 workers vs 2 workers, {os.cpu_count()} cores"
    )
    for env_name in ("cartpole", "heavy"):
        n = max(args.envs)
        two = median(partial(bench_puffer, env_name, n, args.seconds, mp, 2, n))
        four = median(partial(bench_puffer, env_name, n, args.seconds, mp, 4, n))
        print(
            f"  {env_name} {n} envs: 2 workers {two:,.0f} SPS, 4 workers {four:,.0f} SPS, "
            f"kept {100 * four / two:.0f}%",
            flush=True,
        )

    print("\nidle cost over 5 s (parent + 2 workers, % of one core)")
    print(f"  nobody calls the vectorizer: {median(lambda: idle_cost(False)):.2f}%")
    print(f"  parent waiting in recv():    {median(lambda: idle_cost(True)):.2f}%")
    print(f"\nkilled worker reported after {median(kill_latency) * 1000:.0f} ms")
    print(f"\nload={os.getloadavg()}")


if __name__ == "__main__":
    main()
