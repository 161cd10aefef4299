"""Crafter (Hafner 2021): an open-world survival game with 22 achievements.

The benchmark's own settings: 64x64 RGB local view, 17 actions, 10,000-step episodes, reward
+1 per first unlock of an achievement and +-0.1 per health point. Death is a terminal; the
step limit is a truncation. Each finished episode reports every achievement as 0/1
(`achievements/<name>`), so their mean over episodes is the success rate the Crafter score
(the geometric mean of the 22 success rates, in percent) is computed from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from gymnasium import spaces

from puffer.core import Buffer
from puffer.envs._family import FAMILIES
from puffer.envs._loop import LoopEnv
from puffer.envs._shipped import creator

__all__ = ["RENDER_SCALE", "CrafterEnv", "crafter_score", "run_success_rates"]

# render() enlarges the 64x64 view this many times.
RENDER_SCALE = 4


def crafter_score(success_rates: dict[str, float]) -> float:
    """The Crafter score from per-achievement success rates in [0, 1].

    Returns:
        exp(mean(ln(1 + 100 * rate))) - 1 over the achievements, in percent.

    Example:
        >>> round(crafter_score({"a": 1.0, "b": 0.0}), 2)
        9.05
    """
    rates = np.array(list(success_rates.values()), np.float64) * 100
    return float(np.exp(np.mean(np.log1p(rates))) - 1)


def run_success_rates(rows: Iterable[dict[str, float]]) -> dict[str, float]:
    """Per-achievement success rates over every episode of a training run, as the Crafter
    benchmark scores a run (all episodes of its 1M steps, not the last ones).

    Args:
        rows: the run's metrics rows (`puffer.train.metrics.read_jsonl` of its metrics.jsonl);
            each row's `environment/achievements/<name>` means are weighted by its
            `performance/episodes` count. Rows without finished episodes are skipped.

    Returns:
        {achievement name: success rate in [0, 1]}; pass it to `crafter_score`.

    Example:
        >>> rows = [{"performance/episodes": 3, "environment/achievements/a": 1 / 3},
        ...         {"performance/episodes": 1, "environment/achievements/a": 1.0}]
        >>> run_success_rates(rows)
        {'a': 0.5}
    """
    prefix = "environment/achievements/"
    unlocked: dict[str, float] = {}
    episodes = 0.0
    for row in rows:
        count = row.get("performance/episodes", 0.0)
        if count <= 0:
            continue
        episodes += count
        for key, value in row.items():
            if key.startswith(prefix):
                name = key.removeprefix(prefix)
                unlocked[name] = unlocked.get(name, 0.0) + value * count
    if not episodes:
        raise ValueError(
            "no row counts finished episodes (`performance/episodes`); the run logged none, "
            "or it predates that metric"
        )
    return {name: total / episodes for name, total in unlocked.items()}


class CrafterEnv(LoopEnv):
    """`num_envs` Crafter worlds.

    Args:
        num_envs: worlds stepped in one call (rows of the buffer).
        length: steps before an episode is truncated (the benchmark uses 10,000).
        seed: seed of the first `reset()` called without one (world i gets seed + i).
        render_mode: None or "rgb_array" (`render()` enlarges world 0's view).
        buf: a `Buffer` of `num_envs` rows.

    Observations: (num_envs, 64, 64, 3) uint8. Actions: (num_envs,) int32 in [0, 17).

    Example:
        >>> env = CrafterEnv(num_envs=1)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.single_action_space
        ((1, 64, 64, 3), dtype('uint8'), Discrete(17))
    """

    def __init__(
        self,
        *,
        num_envs: int = 1,
        length: int = 10_000,
        seed: int = 0,
        render_mode: str | None = None,
        buf: Buffer | None = None,
    ):
        self.name = "crafter"
        FAMILIES["crafter"].require(self.name)
        import crafter

        self._crafter = crafter
        self._length = length
        self.single_observation_space = spaces.Box(0, 255, (64, 64, 3), np.uint8)
        self.single_action_space = spaces.Discrete(len(self._crafter.constants.actions))
        super().__init__(num_envs, seed, render_mode, buf)

    def _new_game(self, index: int) -> Any:
        return None  # made by the first, seeded reset: Crafter takes its seed at construction

    def _reset_game(self, index: int, seed: int | None) -> np.ndarray:
        if seed is not None:
            self.games[index] = self._crafter.Env(length=self._length, seed=seed)
        return self.games[index].reset()

    def _step_game(self, index: int, action: int) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, done, info = self.games[index].step(action)
        if not done:
            return obs, reward, False, False, {}
        died = info["discount"] == 0
        achievements = {f"achievements/{k}": float(v > 0) for k, v in info["achievements"].items()}
        return obs, reward, died, not died, achievements

    def render(self) -> np.ndarray:
        """World 0's view as RGB, (256, 256, 3) uint8."""
        frame = self.observations[0]
        return frame.repeat(RENDER_SCALE, axis=0).repeat(RENDER_SCALE, axis=1)


crafter = creator(CrafterEnv, "crafter")
