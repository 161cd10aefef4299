"""Random play's return on Procgen games: the baseline a learning run must clearly beat.

Steps `procgen-GAME` (easy mode, all levels, the shipped options) with uniformly random
actions over 64 games at once until `--episodes` episodes have ended, and stores the episodes'
returns with the machine and date as `--out/random/GAME.json` (the table of
`benchmarks/procgen_learn.py --report` reads it). Every game's episodes are drawn from the
same seeds, so a rerun gives the same figures.

    uv run python benchmarks/procgen_random.py bigfish starpilot fruitbot coinrun maze
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

import numpy as np

from puffer.cli.bench import record
from puffer.envs.procgen import GAMES, ProcgenEnv

HERE = Path(__file__).parent
OUT = HERE / "results" / "procgen"


def random_returns(game: str, episodes: int, seed: int = 0, num_envs: int = 64) -> list[float]:
    """The returns of each of `num_envs` games' first ceil(episodes / num_envs) episodes under
    uniformly random actions (float returns in the env's units, game by game).

    Each game's first k episodes, not the first `episodes` to end anywhere: those would favour
    short episodes, whose returns differ (a fish eaten early scores less).
    """
    per_game = -(-episodes // num_envs)
    env = ProcgenEnv(game, num_envs=num_envs, seed=seed)
    rng = np.random.default_rng(seed)
    returns: list[list[float]] = [[] for _ in range(num_envs)]
    running = np.zeros(num_envs, np.float64)
    try:
        env.reset(seed)
        while min(len(r) for r in returns) < per_game:
            actions = rng.integers(0, 15, num_envs).astype(np.int32)
            _, rewards, terminals, truncations, _ = env.step(actions)
            running += rewards
            for i in np.flatnonzero(terminals | truncations):
                returns[i].append(float(running[i]))
                running[i] = 0.0
    finally:
        env.close()
    return [x for game_returns in returns for x in game_returns[:per_game]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="+", choices=GAMES)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    for game in args.games:
        load_before = os.getloadavg()[0]
        returns = random_returns(game, args.episodes, args.seed)
        meta = record(
            "procgen_random", game=game, seed=args.seed, episodes=len(returns),
            load=[load_before, os.getloadavg()[0]],
        )  # fmt: skip
        path = Path(args.out) / "random" / f"{game}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**meta, "returns": returns}) + "\n")
        mean, sd = statistics.mean(returns), statistics.stdev(returns)
        print(f"{game}: random {mean:.3f} ± {sd:.3f} over {len(returns)} episodes", flush=True)


if __name__ == "__main__":
    main()
