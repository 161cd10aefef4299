"""Stable-Baselines3 on puffer-vector: PPO collection speed vs SB3's SubprocVecEnv, and learning.

Collection: SB3's own `PPO.collect_rollouts` (policy forward on CPU, env steps, rollout buffer
writes) timed alone, on `puffer.vector.sb3.VecEnv` over `Multiprocessing` and on SB3's
`SubprocVecEnv`, with the same env (Gymnasium CartPole-v1, or `--env`), the same number of
envs and the same number of processes (one env per process on both sides unless `--workers`),
alternating `--repeats` times in one run; we print median env steps per second and the ratio.

Learning (`--learn`): SB3 PPO with the rl-zoo hyperparameters for CartPole-v1 (8 envs,
n_steps 32, 100k steps) through puffer's Multiprocessing, one run per `--seeds`; prints the
mean return of 16 deterministic evaluation episodes and the wall time of each run.

    uv run python benchmarks/sb3.py                   # collection, about 1 minute
    uv run python benchmarks/sb3.py --learn --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gymnasium
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import SubprocVecEnv, VecMonitor

from puffer.cli.bench import header, timed
from puffer.vector import make
from puffer.vector.sb3 import VecEnv
from puffer.vector.testing import sb3_cartpole_ppo_kwargs


def collection_rate(env, n_steps: int, rollouts: int) -> float:
    """Env steps per second of `PPO.collect_rollouts` on `env` (after one warm-up rollout)."""
    model = PPO("MlpPolicy", env, n_steps=n_steps, batch_size=n_steps, seed=0, device="cpu")
    _, callback = model._setup_learn(n_steps * env.num_envs * (rollouts + 1), None)
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(env, callback, model.rollout_buffer, n_rollout_steps=n_steps)

    def rollout() -> int:
        model.collect_rollouts(env, callback, model.rollout_buffer, n_rollout_steps=n_steps)
        return n_steps * env.num_envs

    return timed(rollout, calls=rollouts).per_wall


def collection(args: argparse.Namespace) -> None:
    workers = args.workers or args.envs
    rates: dict[str, list[float]] = {"puffer Multiprocessing": [], "SB3 SubprocVecEnv": []}
    for _ in range(args.repeats):
        env = VecEnv(
            make(
                f"gym-{args.env}", args.envs, backend="multiprocessing", num_workers=workers, seed=0
            )
        )
        rates["puffer Multiprocessing"].append(collection_rate(env, args.n_steps, args.rollouts))
        env.close()
        env = SubprocVecEnv([lambda: gymnasium.make(args.env)] * args.envs)
        rates["SB3 SubprocVecEnv"].append(collection_rate(env, args.n_steps, args.rollouts))
        env.close()
    print(
        f"{args.env}: {args.envs} envs; puffer {workers} worker processes, SubprocVecEnv "
        f"{args.envs} processes; PPO collect_rollouts, n_steps {args.n_steps} x "
        f"{args.rollouts} rollouts, median of {args.repeats} (env steps/s):"
    )
    base = statistics.median(rates["SB3 SubprocVecEnv"])
    for name, values in rates.items():
        rate = statistics.median(values)
        print(f"  {name:<24} {rate:>9,.0f}  {rate / base:.2f}x SubprocVecEnv")


def learning(args: argparse.Namespace) -> None:
    for seed in args.seeds:
        start = time.perf_counter()
        env = VecMonitor(
            VecEnv(make("gym-CartPole-v1", 8, backend="multiprocessing", num_workers=2, seed=seed))
        )
        model = PPO("MlpPolicy", env, seed=seed, device="cpu", **sb3_cartpole_ppo_kwargs())
        model.learn(100_000)
        env.close()
        evaluation = VecMonitor(VecEnv(make("gym-CartPole-v1", 4, seed=1000 + seed)))
        mean, std = evaluate_policy(model, evaluation, n_eval_episodes=16, deterministic=True)
        evaluation.close()
        print(
            f"  seed {seed}: mean return {mean:.1f} +- {std:.1f}, "
            f"{time.perf_counter() - start:.0f} s wall"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="CartPole-v1")
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--workers", type=int, default=None, help="puffer processes")
    parser.add_argument("--n-steps", type=int, default=256)
    parser.add_argument("--rollouts", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--learn", action="store_true")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"{header('numpy', 'stable-baselines3', 'torch')}; GPU: none used")
    if args.learn:
        learning(args)
    else:
        collection(args)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
