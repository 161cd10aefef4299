"""Stable-Baselines3 PPO on puffer-vector: needs only puffer-vector with its `[sb3]` extra.

`puffer.vector.sb3.VecEnv` makes any puffer vectorizer an SB3 `VecEnv`; here 8 CartPole envs
in worker processes over shared memory, with the rl-zoo CartPole-v1 hyperparameters.

    python examples/sb3_ppo.py                       # 100k steps, then 16 evaluation episodes
    python examples/sb3_ppo.py --total-timesteps 2048 --eval-episodes 2
"""

from __future__ import annotations

import argparse

from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import VecMonitor

from puffer.vector import make
from puffer.vector.sb3 import VecEnv
from puffer.vector.testing import sb3_cartpole_ppo_kwargs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="gym-CartPole-v1", help="a puffer registry name")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-workers", type=int, default=2, help="worker processes")
    parser.add_argument("--total-timesteps", type=int, default=100_000)
    parser.add_argument("--eval-episodes", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    vec = make(
        args.env,
        args.num_envs,
        backend="multiprocessing",
        num_workers=args.num_workers,
        seed=args.seed,
    )
    env = VecMonitor(VecEnv(vec))
    try:
        model = PPO("MlpPolicy", env, seed=args.seed, device="cpu", **sb3_cartpole_ppo_kwargs())
        model.learn(args.total_timesteps)
    finally:
        env.close()
    evaluation = VecMonitor(VecEnv(make(args.env, 4, seed=1000 + args.seed)))
    mean, std = evaluate_policy(
        model, evaluation, n_eval_episodes=args.eval_episodes, deterministic=True
    )
    evaluation.close()
    print(f"mean return {mean:.1f} +- {std:.1f} over {args.eval_episodes} episodes")


if __name__ == "__main__":
    main()
