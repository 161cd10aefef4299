"""Self-play on turn-based PettingZoo games: the learning runs of the turn-based games, as a script.

Trains with the env's shipped TOML (`puffer train ENV` resolves the same config; budgets are in
it): one policy plays both seats of every game (the emulated AEC env gives it the row of
whichever player is to move, with the legal-action mask). After training, `puffer.train.arena`
pits the greedy policy against uniformly random legal play and against the one-ply scripted
opponent (win now, else do not allow an immediate win, else random), alternating who moves
first, and prints wins / draws / losses.

Ocean's connect4 is no self-play: its C env answers every move with PufferLib 3.0's depth-3
negamax opponent. After training, the greedy policy plays 1,000 more games against it (the
env's legal-action masks exclude full columns) and the script counts wins from the rewards.

Cases and targets:
  tictactoe     no losses in 1,000 games vs random, >= 95% non-losses in 1,000 games vs one-ply
  connect_four  >= 95% wins in 1,000 games vs random
  connect4      (Ocean) >= 80% wins in 1,000 games vs its built-in negamax opponent

    uv run python benchmarks/selfplay.py tictactoe --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import torch

from puffer.cli.bench import header
from puffer.core import make
from puffer.train import train
from puffer.train.arena import one_ply_player, play_games, policy_player, random_player
from puffer.train.config import load_config

# (env, games per opponent, opponents): connect four's target is against random play only.
CASES = {
    "tictactoe": ("pettingzoo-classic.tictactoe_v3", 1000, ("random", "one-ply")),
    "connect_four": ("pettingzoo-classic.connect_four_v3", 1000, ("random",)),
}
OPPONENTS = {"random": random_player, "one-ply": one_ply_player}
OCEAN_CASES = {"connect4": 1000}


def ocean_games(env_name: str, policy, seed: int, games: int) -> tuple[int, int]:
    """(wins, games) of the greedy (feed-forward) policy, its most likely legal action as
    `arena.policy_player` picks it but for 64 boards at once, in `games` games of a one-seat
    Ocean game against its built-in opponent; a game is won when it ends with a positive reward."""
    env = make(env_name, num_envs=64)
    obs, _ = env.reset(seed=seed + 10_000)
    wins = ended = 0
    with torch.no_grad():
        while ended < games:
            state = policy.initial_state(env.num_agents, torch.device("cpu"))
            params, _, _ = policy.forward_eval(torch.from_numpy(obs), state)
            legal = torch.from_numpy(env.action_masks)
            actions = params.masked_fill(~legal, -torch.inf).argmax(-1)
            obs, rewards, terminals, _, _ = env.step(actions.numpy().astype(np.int32))
            wins += int((terminals & (rewards > 0)).sum())
            ended += int(terminals.sum())
    env.close()
    return wins, ended


def run(case: str, seed: int, steps: int | None, games: int | None) -> None:
    if case in OCEAN_CASES:
        env_name, default_games, opponents = case, OCEAN_CASES[case], ()
    else:
        env_name, default_games, opponents = CASES[case]
    overrides = ["--train.seed", str(seed), "--train.device", "cpu"]
    overrides += ["--train.data-dir", tempfile.mkdtemp()]
    if steps:
        overrides += ["--train.total-timesteps", str(steps)]
    config = load_config(env_name, overrides=overrides)
    start = time.perf_counter()
    result = train(env_name, config)
    elapsed = time.perf_counter() - start
    games = games or default_games
    line = f"{case} seed {seed}: {result.global_step} steps in {elapsed:.0f}s"
    if case in OCEAN_CASES:
        wins, played = ocean_games(env_name, result.policy, seed, games)
        line += f" | training's last perf {result.recent.get('perf', float('nan')):.3f}"
        line += f" | vs built-in: {wins}W {played - wins}L of {played} (win {wins / played:.3f})"
        print(f"{line} | load {os.getloadavg()[0]:.1f}", flush=True)
        return
    env = make(env_name)
    learner = policy_player(result.policy, greedy=True)
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
    parser.add_argument("case", choices=[*CASES, *OCEAN_CASES])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=None, help="override the TOML's budget")
    parser.add_argument("--games", type=int, default=None, help="games per opponent")
    args = parser.parse_args()
    print(header("torch"))
    for seed in args.seeds:
        run(args.case, seed, args.steps, args.games)


if __name__ == "__main__":
    main()
