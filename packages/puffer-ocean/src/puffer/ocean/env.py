"""`OceanEnv`: the Python face of a C env, a `PufferEnv` stepping many instances in one call.

The arrays of the buffer contract are handed to the compiled `_ocean` class once, at
construction; `reset` and `step` then run entirely in C (without the GIL, optionally across
threads) and write observations, rewards, terminals and truncations in place.
"""

from __future__ import annotations

import dataclasses
import difflib
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from puffer.core import APIUsageError, Buffer, PufferEnv, Vectorization
from puffer.ocean import _ocean
from puffer.ocean.render import frame_to_ansi

__all__ = ["OceanEnv", "env_class", "header_path"]

Infos = list[dict[str, Any]]
RENDER_MODES = ("rgb_array", "ansi")


class OceanEnv(PufferEnv):
    """Base class of the C envs: `num_envs` instances of one C header, one buffer for all.

    Every subclass is built by `env_class` from the spec its header declares (`SPEC` in
    `csrc/<env>/<env>.h`): `c_name` (the class in `_ocean`), `config_class` (a frozen dataclass
    of the header's config fields and defaults) and the two single-agent spaces. The agents of
    one instance come from the header's `c_init` under the config. Rows are laid out env by
    env: env i owns `num_agents / num_envs` consecutive rows.

    Args:
        num_envs: instances of the C env, stepped together.
        buf: arrays to write into (`num_agents` rows); allocated when None.
        num_threads: threads for `step` (1 steps in the calling thread).
        render_mode: "rgb_array" (`render()` returns an (H, W, 3) uint8 frame) or "ansi"
            (a string of 24-bit colour terminal text).
        log_interval: steps between collections of the episode logs; `step` returns the means
            over the episodes finished in that window as `[{name: value, ..., "n": count}]`,
            and `[]` when none finished.
        **config: overrides of `config_class` fields.

    Raises:
        APIUsageError: an unknown config key, a value of the wrong type or outside the range
            the header declares, or a bad `buf`. `step` raises it, stepping nothing, for an
            action outside the action space (discrete) or not finite (continuous), naming the
            row and the value.
    """

    c_name: ClassVar[str]
    config_class: ClassVar[type]
    spec: ClassVar[dict[str, Any]]
    # The env's training config as its ordered TOML layers (`puffer.train.config` folds them):
    # (configs/<name>.toml,) where one ships, else () and the trainer derives its keys.
    config_sources: ClassVar[tuple[Traversable, ...]] = ()
    # `step` checks shape and dtype (puffer.core.check_actions), and ranges too for arrays it
    # must cast into the int32/float32 buffer; the binding checks the buffer's ranges and
    # finiteness in C, on every step.
    check_action_ranges = False
    vectorization = Vectorization.NATIVE  # `num_envs` instances in one C object

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
        self.render_mode = render_mode
        self.log_interval = log_interval
        native = getattr(_ocean, self.c_name)
        self._c = native(self.num_envs, dataclasses.asdict(self.config), num_threads)
        self.num_agents = int(self._c.num_agents)
        try:
            super().__init__(buf)
            self._c.bind(
                self.observations,
                self.actions,
                self.rewards,
                self.terminals,
                self.truncations,
                self.action_masks,
            )
        except BaseException:
            self._c.close()  # c_init allocated; nothing else will free it
            raise
        self.masks[:] = True
        self._steps = 0
        self._seeds: np.random.Generator | None = None

    @property
    def num_threads(self) -> int:
        """Threads used by `step`; settable."""
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

    def save_state(self) -> np.ndarray:
        """Everything needed to continue these envs bit-exactly, as a 1-D uint8 array (a copy).

        Holds every instance's struct (RNG, tick, pending logs, config), its heap arrays and its
        observation rows, plus the step count that times log collection; never pointers.
        `reset()` without a seed after `load_state` draws a fresh seed (it is not saved).
        """
        self._check_open("save_state")
        steps = np.array([self._steps], "<i8").view(np.uint8)
        return np.concatenate([self._c.save_state(), steps])

    def load_state(self, state: np.ndarray) -> None:
        """Restore what `save_state` returned, in place (the bound arrays keep their identity).

        Raises:
            APIUsageError: `state` is not a 1-D uint8 array from `save_state` of an env with
                the same name, `num_envs` and config; nothing is changed then.
        """
        self._check_open("load_state")
        state = np.asarray(state)
        if state.dtype != np.uint8 or state.ndim != 1 or state.size < 8:
            raise APIUsageError(
                f"{self}: load_state() needs the 1-D uint8 array save_state() returned, got "
                f"shape {state.shape} dtype {state.dtype}"
            )
        self._c.load_state(np.ascontiguousarray(state[:-8]))
        self._steps = int(state[-8:].view("<i8")[0])
        self._has_reset = True

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


def env_class(name: str) -> type[OceanEnv]:
    """The `OceanEnv` subclass of the C env `name`, built from its header's spec.

    The class is named after the env in CamelCase (`cartpole_continuous` ->
    `CartpoleContinuous`), its config dataclass likewise with `Config` appended. Where
    `configs/<name>.toml` ships beside this module, the class's `config_sources` names it:
    the training config `puffer.train.config.load_config` folds.
    """
    spec = _ocean.SPECS[name]
    class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    dtype = np.dtype(spec["obs_dtype"])
    low, high = spec["obs_low"], spec["obs_high"]
    if isinstance(low, list):
        low, high = np.array(low, dtype), np.array(high, dtype)
    obs_space = spaces.Box(low, high, (spec["obs_size"],), dtype)
    sizes = spec["action_sizes"]
    if len(sizes) == 1:
        action_space: spaces.Space = spaces.Discrete(sizes[0])
    elif sizes:
        action_space = spaces.MultiDiscrete(sizes)
    else:
        shape = (spec["action_dim"],)
        action_space = spaces.Box(spec["action_low"], spec["action_high"], shape, np.float32)
    attributes = {
        "__doc__": f"{spec['doc']}\n\nBuilt from csrc/{header_path(spec)} (see `OceanEnv`).",
        "__module__": "puffer.ocean",
        "__qualname__": class_name,
        "c_name": name,
        "config_class": _config_class(f"{class_name}Config", spec["config"]),
        "spec": spec,
        "single_observation_space": obs_space,
        "single_action_space": action_space,
        # Headers with a SPEC.action_mask write the buffer's legal-action masks.
        "writes_action_masks": spec["action_masks"],
    }
    config_file = files("puffer.ocean") / "configs" / f"{name}.toml"
    if config_file.is_file():
        attributes["config_sources"] = (config_file,)
    return type(class_name, (OceanEnv,), attributes)


def header_path(spec: dict[str, Any]) -> str:
    """The header's path under csrc/, e.g. `squared/squared.h`."""
    return "/".join(spec["header"].replace("\\", "/").split("/")[-2:])


def _config_class(class_name: str, fields: list[dict[str, Any]]) -> type:
    """A frozen dataclass of the header's config fields, defaults and one-line meanings."""
    types = {"int": int, "float": float}
    items = [
        (
            f["name"],
            types[f["type"]],
            dataclasses.field(
                default=types[f["type"]](f["default"]),
                metadata={"doc": f["doc"], "min": f["min"], "max": f["max"]},
            ),
        )
        for f in fields
    ]
    lines = [f"    {f['name']}: {f['doc']} (in [{f['min']:g}, {f['max']:g}])" for f in fields]
    doc = f"{class_name[: -len('Config')]} settings, declared in its C header."
    if lines:
        doc += "\n\nAttributes:\n" + "\n".join(lines)
    cls = dataclasses.make_dataclass(class_name, items, frozen=True, namespace={"__doc__": doc})
    cls.__module__ = "puffer.ocean"
    return cls
