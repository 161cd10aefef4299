"""What an emulated env reports when an episode ends: one flat `{str: float}` dict per episode.

`episode_return` and `episode_length` are sums over the episode's steps. Every other numeric
scalar the env's `info` carries (nested dicts flattened with `/`) is reduced per key, as
Stable-Baselines3's `Monitor` keeps an info's final values rather than adding them up:

| reduction | the episode's value | default for |
|---|---|---|
| `"mean"` | the mean over the steps whose info had the key | numbers (a speed, an action) |
| `"last"` | the value at the last step that had the key | booleans (`is_success`, `crashed`) |
| `"sum"` | the sum over those steps | nothing; a per-step reward term wants it |

An env overrides the default per key: the emulation's `info_reduce={"reward_ctrl": "sum"}`
argument, or the env's own `metadata["puffer.info_reduce"]` (the argument wins for a key both
name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from puffer.core.errors import APIUsageError

__all__ = ["INFO_REDUCE_KEY", "REDUCTIONS", "EpisodeStats", "info_reductions"]

#: The key of an env's `metadata` that holds its per-key reductions.
INFO_REDUCE_KEY = "puffer.info_reduce"
REDUCTIONS = ("mean", "last", "sum")

_BOOLS = (bool, np.bool_)
_NUMBERS = (int, float, np.integer, np.floating)


def info_reductions(env: Any, given: Mapping[str, str] | None, owner: str) -> dict[str, str]:
    """The per-key reductions of `env`'s infos: its metadata's, then `given` over them.

    Raises:
        APIUsageError: a reduction other than "mean", "last" or "sum".
    """
    metadata = getattr(getattr(env, "unwrapped", env), "metadata", None) or {}
    merged = {**dict(metadata.get(INFO_REDUCE_KEY, {})), **dict(given or {})}
    for key, how in merged.items():
        if how not in REDUCTIONS:
            raise APIUsageError(
                f"{owner}: info_reduce[{key!r}] is {how!r}; use one of {', '.join(REDUCTIONS)}"
            )
    return merged


class EpisodeStats:
    """Running return, length and per-key info values of one agent's current episode.

    Args:
        reduce: per-key reductions overriding the defaults (see the module).

    Example:
        >>> stats = EpisodeStats({"bonus": "sum"})
        >>> for speed, crashed in ((10, False), (20, True)):
        ...     stats.total += 1.0
        ...     stats.length += 1
        ...     stats.add_info({"speed": speed, "crashed": crashed, "bonus": 0.5})
        >>> stats.finish()
        {'episode_return': 2.0, 'episode_length': 2.0, 'speed': 15.0, 'crashed': 1.0, 'bonus': 1.0}
    """

    __slots__ = ("_values", "length", "reduce", "total")

    def __init__(self, reduce: Mapping[str, str] | None = None) -> None:
        self.total = 0.0
        self.length = 0
        self.reduce = dict(reduce or {})
        # key -> [sum, steps, last, is_bool]
        self._values: dict[str, list] = {}

    def add_info(self, info: dict[str, Any], prefix: str = "") -> None:
        """Take the numeric scalars of one step's `info` (nested dicts flattened with '/')."""
        for key, value in info.items():
            if isinstance(value, dict):
                self.add_info(value, f"{prefix}{key}/")
                continue
            if isinstance(value, np.ndarray):
                if value.size != 1 or value.dtype.kind not in "biuf":
                    continue
                flag, value = value.dtype.kind == "b", value.item()
            elif isinstance(value, _BOOLS):
                flag = True
            elif isinstance(value, _NUMBERS):
                flag = False
            else:
                continue
            number = float(value)
            name = prefix + str(key)
            kept = self._values.get(name)
            if kept is None:
                self._values[name] = [number, 1, number, flag]
            else:
                kept[0] += number
                kept[1] += 1
                kept[2] = number

    def finish(self) -> dict[str, float]:
        """The finished episode's flat stats dict; starts a new episode."""
        stats = {"episode_return": float(self.total), "episode_length": float(self.length)}
        for key, (total, steps, last, flag) in self._values.items():
            how = self.reduce.get(key) or ("last" if flag else "mean")
            value = total / steps if how == "mean" else last if how == "last" else total
            stats.setdefault(key, value)
        self.total, self.length, self._values = 0.0, 0, {}
        return stats
