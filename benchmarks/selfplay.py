"""Self-play on turn-based PettingZoo games: the learning acceptance runs of issue 15, as a script.

One policy plays both seats of every game (the emulated AEC env gives it the row of whichever
player is to move, with the legal-action mask); after training, `puffer.train.arena` pits the
greedy policy against uniformly random legal play and against the one-ply scripted opponent
(win now, else do not allow an immediate win, else random), alternating who moves first, and
prints wins / draws / losses.

Cases (budgets are agent steps, both seats counted):
  tictactoe     tictactoe_v3, 32 envs, 300k steps: target no losses in 1,000 games vs random,
                >= 95% non-losses in 1,000 games vs one-ply
  connect_four  connect_four_v3, 32 envs, 1M steps: target >= 95% wins vs random

    uv run python benchmarks/selfplay.py tictactoe --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from puffer.core import make
from puffer.train import Config, PolicyConfig, PuffeRL, TrainConfig, VecConfig, make_policy
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player
from puffer.train.pufferl import apply_torch_threads
from puffer.train.run import make_vecenv

# Turn-based rows alternate between acting (mask True) and waiting; the value of waiting rows
# is not trained (the loss is masked), so lambda = 1 lets those values cancel out of the
# advantage instead of leaking into it.
SELFPLAY = {
    "horizon": 16,
    "minibatch_size": 512,
    "update_epochs": 2,
    "gamma": 0.99,
    "gae_lambda": 1.0,
    "learning_rate": 0.003,
    "optimizer": "adam",
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "prio_alpha": 0.0,
}
CASES = {
    "tictactoe": ("pettingzoo-classic.tictactoe_v3", 300_000, 1000),
    "connect_four": ("pettingzoo-classic.connect_four_v3", 1_000_000, 200),
}


def run(case: str, seed: int, steps: int | None, games: int | None, threads: int) -> None:
    env_name, budget, default_games = CASES[case]
    config = Config(
        train=TrainConfig(
            **SELFPLAY,
            total_timesteps=steps or budget,
            batch_size=2048,
            seed=seed,
            device="cpu",
            torch_threads=threads,
            data_dir=tempfile.mkdtemp(),
        ),
        policy=PolicyConfig(hidden_size=128, num_layers=2),
        vec=VecConfig(backend="serial", num_envs=32),
    )
    apply_torch_threads(config.train)
    vecenv = make_vecenv(env_name, config)
    trainer = PuffeRL(config, vecenv, make_policy(config.policy, vecenv))
    start = time.perf_counter()
    while trainer.global_step < config.train.total_timesteps:
        trainer.evaluate()
        trainer.train()
        trainer.mean_and_log()
    elapsed = time.perf_counter() - start
    vecenv.close()
    env = make(env_name)
    learner = policy_player(trainer.policy, greedy=True)
    games = games or default_games
    line = f"{case} seed {seed}: {trainer.global_step} steps in {elapsed:.0f}s"
    for name, opponent in (("random", random_player(seed)), ("one-ply", one_ply_player(seed))):
        result = play_games(env, learner, opponent, games)
        r = result.as_dict()
        line += (
            f" | vs {name}: {result.wins}W {result.draws}D {result.losses}L"
            f" (win {r['win_rate']:.3f}, non-loss {r['non_loss_rate']:.3f})"
        )
    print(line, flush=True)
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=list(CASES))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="override the case's budget")
    parser.add_argument("--games", type=int, default=None, help="games per opponent")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}")
    for seed in args.seeds:
        run(args.case, seed, args.steps, args.games, args.threads)


if __name__ == "__main__":
    main()
