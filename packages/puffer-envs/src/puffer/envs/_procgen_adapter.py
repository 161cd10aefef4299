"""Procgen's side of `puffer.envs.procgen`: runs in Procgen's own interpreter, not the trainer's.

`puffer.vector`'s isolated worker loads this file by path in a venv holding procgen2 0.10.7,
numpy < 2 and gym < 1, so it imports only numpy and procgen (never puffer). One instance is
Procgen's own vector env (`ProcgenGym3Env`, `num_envs` games stepped in one C call) writing
into its rows of the trainer's shared buffer.
"""

from __future__ import annotations

import contextlib
import io
import random
from typing import Any

import numpy as np


def _gym3_env_class() -> Any:
    # `import procgen` imports gym, which prints a page about gym being unmaintained to
    # stderr in every worker; the trainer's output is not the place for it.
    with contextlib.redirect_stderr(io.StringIO()):
        from procgen import ProcgenGym3Env
    return ProcgenGym3Env


class ProcgenInstance:
    """`num_envs` games of one Procgen game over `rows` (arrays of `num_envs` rows each).

    Observations (num_envs, 64, 64, 3) uint8; actions (num_envs,) int32 in [0, 15). A game
    auto-resets in the step its episode ends (Procgen's `first` flag): that step is a terminal
    (Procgen's time limits are part of each game and it does not tell them apart), and the
    episode's stats are `episode_return`, `episode_length` and `level_complete` (1 when the
    level was solved: the coin reached, the fish grown, ...).
    """

    def __init__(self, rows: dict[str, np.ndarray], game: str, seed: int, **options: Any):
        self.rows = rows
        self.game = game
        self.options = options
        self.num_envs = len(rows["rewards"])
        self._env_class = _gym3_env_class()
        self._next_seed: int | None = seed
        self.env: Any = None
        self._returns = np.zeros(self.num_envs, np.float64)
        self._lengths = np.zeros(self.num_envs, np.int64)

    def reset(self, seed: int | None) -> list[dict]:
        """Start new games: Procgen has no reset, so the vector env is made again, seeded
        with `seed` (or the constructor's seed first, then seeds drawn from the last one)."""
        if seed is None:
            seed = self._next_seed
        self._next_seed = random.Random(seed).randrange(2**31)
        if self.env is not None:
            self.env.close()
        self.env = self._env_class(
            num=self.num_envs, env_name=self.game, rand_seed=seed, **self.options
        )
        _, obs, _ = self.env.observe()
        rows = self.rows
        rows["observations"][...] = obs["rgb"]
        rows["rewards"][...] = 0
        rows["terminals"][...] = False
        rows["truncations"][...] = False
        rows["masks"][...] = True
        self._returns[...] = 0
        self._lengths[...] = 0
        return []

    def step(self) -> list[dict]:
        rows = self.rows
        self.env.act(rows["actions"])
        reward, obs, first = self.env.observe()
        rows["observations"][...] = obs["rgb"]
        rows["rewards"][...] = reward
        rows["terminals"][...] = first
        self._returns += reward
        self._lengths += 1
        if not first.any():
            return []
        infos = []
        game_infos = self.env.get_info()
        for i in np.flatnonzero(first):
            infos.append(
                {
                    "episode_return": float(self._returns[i]),
                    "episode_length": float(self._lengths[i]),
                    "level_complete": float(game_infos[i]["prev_level_complete"]),
                }
            )
        self._returns[first] = 0
        self._lengths[first] = 0
        return infos

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None
