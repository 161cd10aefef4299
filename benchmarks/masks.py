"""Legal-action masks: illegal samples of a masked and an unmasked policy on chess and go.

At `--positions` positions of random legal play (PettingZoo classic chess_v6 and go_v5 19x19,
emulated), an untrained policy draws `--draws` actions per position through the trainer's own
rollout path (`puffer.train.testing.count_illegal_samples`). With masks the count of illegal
samples must be 0; without them (the mask path switched off) most draws are illegal.
Defaults: 2,000 positions x 500 draws = 1M samples per game.

    uv run python benchmarks/masks.py
"""

from __future__ import annotations

import argparse
import functools
import time

import pettingzoo
import torch

from puffer.cli.bench import header
from puffer.core import emulate_pettingzoo
from puffer.train.testing import count_illegal_samples
from puffer.vector import make

GAMES = {"chess_v6": ("classic/chess-v6", {}), "go_v5": ("classic/go-v5", {})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="*", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--unmasked-positions", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(header("torch", "pettingzoo"))
    for game in args.games:
        env_id, kwargs = GAMES[game]
        creator = functools.partial(pettingzoo.make, "aec", env_id, **kwargs)
        vec = make(lambda buf=None, c=creator: emulate_pettingzoo(c, buf=buf), 1)
        start = time.perf_counter()
        illegal, total = count_illegal_samples(vec, args.positions, args.draws)
        elapsed = time.perf_counter() - start
        bad, drawn = count_illegal_samples(vec, args.unmasked_positions, args.draws, masked=False)
        vec.close()
        print(
            f"{game}: masked {illegal} illegal of {total:,} samples ({elapsed:.0f}s); "
            f"unmasked {bad:,} illegal of {drawn:,} ({bad / max(drawn, 1):.1%})",
            flush=True,
        )


if __name__ == "__main__":
    main()
