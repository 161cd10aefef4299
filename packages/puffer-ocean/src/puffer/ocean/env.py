"""`OceanEnv`: the Python face of a C env, a `PufferEnv` stepping many instances in one call.

The arrays of the buffer contract are handed to the compiled `_ocean` class once, at
construction; `reset` and `step` then run entirely in C (without the GIL, optionally across
OpenMP threads) and write observations, rewards, terminals and truncations in place.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any, ClassVar

import numpy as np

from puffer.core import APIUsageError, Buffer, PufferEnv
from puffer.ocean import _ocean
from puffer.ocean.render import frame_to_ansi

__all__ = ["OceanEnv", "check_positive"]

Infos = list[dict[str, Any]]
RENDER_MODES = ("rgb_array", "ansi")


class OceanEnv(PufferEnv):
    """Base class of the C envs: `num_envs` instances of one C header, one buffer for all.

    Subclasses set `c_name` (the class in `_ocean`), `config_class` (a dataclass whose fields
    are the C struct's config fields, with defaults), the two single-agent spaces, and override
    `agents_per_env` when an instance holds more than one agent. Rows are laid out env by env:
    env i owns rows `[i * agents_per_env, (i + 1) * agents_per_env)`.

    Args:
        num_envs: instances of the C env, stepped together.
        buf: arrays to write into (`num_envs * agents_per_env` rows); allocated when None.
        num_threads: OpenMP threads for `step` (1 steps in the calling thread).
        render_mode: "rgb_array" (`render()` returns an (H, W, 3) uint8 frame) or "ansi"
            (a string of 24-bit colour terminal text).
        log_interval: steps between collections of the episode logs; `step` returns the means
            over the episodes finished in that window as `[{name: value, ..., "n": count}]`,
            and `[]` when none finished.
        **config: overrides of `config_class` fields.

    Raises:
        APIUsageError: an unknown config key, a value of the wrong type, or a bad `buf`.
    """

    c_name: ClassVar[str]
    config_class: ClassVar[type]

    def __init__(
        self,
        num_envs: int = 1,
        buf: Buffer | None = None,
        *,
        num_threads: int = 1,
        render_mode: str = "rgb_array",
        log_interval: int = 128,
        **config: Any,
    ):
        name = type(self).__name__
        if not isinstance(num_envs, int | np.integer) or num_envs < 1:
            raise APIUsageError(f"{name}: num_envs is {num_envs!r}, expected an int >= 1")
        if render_mode not in RENDER_MODES:
            raise APIUsageError(
                f"{name}: render_mode is {render_mode!r}, expected one of {RENDER_MODES}"
            )
        if log_interval < 1:
            raise APIUsageError(f"{name}: log_interval is {log_interval}, expected >= 1")
        self.config = _make_config(name, self.config_class, config)
        self.num_envs = int(num_envs)
        self.num_agents = self.num_envs * self.agents_per_env(self.config)
        self.render_mode = render_mode
        self.log_interval = log_interval
        super().__init__(buf)
        self.masks[:] = True
        native = getattr(_ocean, self.c_name)
        self._c = native(
            self.num_envs,
            dataclasses.asdict(self.config),
            self.observations,
            self.actions,
            self.rewards,
            self.terminals,
            self.truncations,
            num_threads,
        )
        self._steps = 0
        self._seeds: np.random.Generator | None = None

    @classmethod
    def agents_per_env(cls, config: Any) -> int:
        """Agents (rows) in one instance under `config`; 1 unless the env says otherwise."""
        return 1

    @property
    def num_threads(self) -> int:
        """OpenMP threads used by `step`; settable."""
        return self._c.num_threads

    @num_threads.setter
    def num_threads(self, value: int) -> None:
        self._c.num_threads = value

    def _reset(self, seed: int | None) -> Infos:
        # Instance i is seeded with a hash of (seed, i) in C. Without a seed, the first reset
        # draws one from the OS and later resets continue from it, reproducibly.
        if seed is not None:
            c_seed = int(seed) % 2**64
            self._seeds = np.random.default_rng(c_seed)
        else:
            if self._seeds is None:
                self._seeds = np.random.default_rng()
            c_seed = int(self._seeds.integers(2**63))
        self._c.reset(c_seed)
        self._c.log()  # episodes cut short by the reset are not reported
        self._steps = 0
        return []

    def _step(self) -> Infos:
        self._c.step()
        self._steps += 1
        if self._steps % self.log_interval:
            return []
        log = self._c.log()
        return [log] if log else []

    def render(self, index: int = 0) -> np.ndarray | str:
        """Draw instance `index`.

        Returns:
            render_mode "rgb_array": an (H, W, 3) uint8 frame; "ansi": a string of
            terminal text in 24-bit colour, two frame rows per text line.
        """
        self._check_open("render")
        frame = self._c.render(index)
        return frame if self.render_mode == "rgb_array" else frame_to_ansi(frame)

    def close(self) -> None:
        """Free the C envs. Idempotent; the arrays stay valid."""
        if not self.closed:
            self._c.close()
        super().close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs}, num_agents={self.num_agents})"


def _make_config(owner: str, config_class: type, overrides: dict[str, Any]) -> Any:
    """Build `config_class` from `overrides`, refusing unknown keys and mistyped values."""
    fields = {field.name: field for field in dataclasses.fields(config_class)}
    defaults = config_class()
    values = {}
    for key, value in overrides.items():
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise APIUsageError(
                f"{owner}: unknown config key {key!r}; {hint}known keys: {', '.join(fields)}"
            )
        default = getattr(defaults, key)
        if isinstance(value, bool | np.bool_):
            raise APIUsageError(f"{owner}: config {key}={value!r} must be a number, not a bool")
        if isinstance(default, int):
            if not isinstance(value, int | np.integer):
                raise APIUsageError(
                    f"{owner}: config {key}={value!r} must be an int like {default}"
                )
            value = int(value)
        if isinstance(default, float):
            if not isinstance(value, int | float | np.integer | np.floating):
                raise APIUsageError(
                    f"{owner}: config {key}={value!r} must be a float like {default}"
                )
            value = float(value)
        values[key] = value
    return config_class(**values)


def check_positive(config: Any, *names: str) -> None:
    """Raise `APIUsageError` unless every named field of `config` is > 0 (for `__post_init__`)."""
    for name in names:
        value = getattr(config, name)
        if value <= 0:
            raise APIUsageError(
                f"{type(config).__name__}.{name} is {value!r}, expected a value > 0"
            )
