"""Self-play on turn-based PettingZoo games: the learning acceptance runs of issue 15, as a script.

Trains with the env's shipped TOML (`puffer train ENV` resolves the same config; budgets are in
it): one policy plays both seats of every game (the emulated AEC env gives it the row of
whichever player is to move, with the legal-action mask). After training, `puffer.train.arena`
pits the greedy policy against uniformly random legal play and against the one-ply scripted
opponent (win now, else do not allow an immediate win, else random), alternating who moves
first, and prints wins / draws / losses.

Cases and targets:
  tictactoe     no losses in 1,000 games vs random, >= 95% non-losses in 1,000 games vs one-ply
  connect_four  >= 95% wins in 1,000 games vs random

    uv run python benchmarks/selfplay.py tictactoe --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from puffer.cli.config import load_config
from puffer.core import make
from puffer.train import train
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player

# (env, games per opponent, opponents): connect four's target is against random play only.
CASES = {
    "tictactoe": ("pettingzoo-classic.tictactoe_v3", 1000, ("random", "one-ply")),
    "connect_four": ("pettingzoo-classic.connect_four_v3", 1000, ("random",)),
}
OPPONENTS = {"random": random_player, "one-ply": one_ply_player}


def run(case: str, seed: int, steps: int | None, games: int | None) -> None:
    env_name, default_games, opponents = CASES[case]
    overrides = ["--train.seed", str(seed), "--train.device", "cpu"]
    overrides += ["--train.data-dir", tempfile.mkdtemp()]
    if steps:
        overrides += ["--train.total-timesteps", str(steps)]
    config = load_config(env_name, overrides=overrides).run
    start = time.perf_counter()
    result = train(env_name, config)
    elapsed = time.perf_counter() - start
    env = make(env_name)
    learner = policy_player(result.policy, greedy=True)
    games = games or default_games
    line = f"{case} seed {seed}: {result.global_step} steps in {elapsed:.0f}s"
    for name in opponents:
        outcome = play_games(env, learner, OPPONENTS[name](seed), games)
        rates = outcome.as_dict()
        line += (
            f" | vs {name}: {outcome.wins}W {outcome.draws}D {outcome.losses}L"
            f" (win {rates['win_rate']:.3f}, non-loss {rates['non_loss_rate']:.3f})"
        )
    print(f"{line} | load {os.getloadavg()[0]:.1f}", flush=True)
    env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case", choices=list(CASES))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="override the TOML's budget")
    parser.add_argument("--games", type=int, default=None, help="games per opponent")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}")
    for seed in args.seeds:
        run(args.case, seed, args.steps, args.games)


if __name__ == "__main__":
    main()
