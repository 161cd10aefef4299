"""The fold: `load_config` folds `[default.toml, *the env's sources, --config FILE, overrides]`.

Every key is known before the first layer (`_Fold.keys`, the `key_table` of the typed sections,
puffer-sweep's options and the env's config class); each layer records only the keys it sets,
each parsed and checked once as it arrives (`Key.parse`); the config is built at the end. `Config.notes` says
why a derived or family key has its value. A file may add [env] keywords to a creator that
takes any (`gym-*`) and declare a searched parameter `[sweep.<section>.<key>]` for any key.
"""

from __future__ import annotations

import dataclasses
import inspect
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, get_type_hints

from puffer.core import env_creator
from puffer.sweep import parse_sweep_config
from puffer.train.config.keys import (
    SECTIONS,
    ConfigError,
    Key,
    closest,
    coerce,
    flag,
    normalize,
    refuse_renamed,
    refuse_unknown,
)
from puffer.train.config.sections import TYPED_SECTIONS
from puffer.train.config.sources import config_sources, source_origin
from puffer.train.config.whole import Config, key_table
from puffer.train.pufferlib_ini import read_pufferlib_ini
from puffer.vector import default_num_workers

__all__ = ["Override", "env_config_class", "env_defaults", "load_config", "parse_overrides"]

DEFAULT_TOML = "default.toml"
_TOML_SCALARS = (bool, int, float, str)
KeyPath = tuple[str, str]


def env_config_class(creator: Callable[..., Any]) -> type | None:
    """The frozen dataclass of an env's [env] keys: the creator's keywords whose defaults TOML
    holds (`buf`, `render_mode` are the CLI's), typed by them, then an Ocean env's C-header
    fields with their meanings and ranges. None for a creator that takes any keyword and
    declares none (`gym-*`, `pettingzoo-*`: their [env] stays a dict). One class per creator,
    so that configs of one env compare equal; an instance pickles as its creator and values."""
    try:
        return _ENV_CLASSES[creator]
    except KeyError:
        pass
    try:
        parameters = list(inspect.signature(creator).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    fields: dict[str, tuple[str, Any, Any]] = {
        p.name: (p.name, type(p.default), dataclasses.field(default=p.default))
        for p in parameters
        if p.name not in ("buf", "render_mode") and isinstance(p.default, _TOML_SCALARS)
    }
    header = getattr(creator, "config_class", None)
    made: type | None = None
    if dataclasses.is_dataclass(header):
        hints = get_type_hints(header)
        fields |= {
            f.name: (
                f.name,
                hints[f.name],
                dataclasses.field(default=f.default, metadata=f.metadata),
            )
            for f in dataclasses.fields(header)
        }
    if header is not None or not any(p.kind is p.VAR_KEYWORD for p in parameters):
        name = getattr(header or creator, "__name__", type(creator).__name__).removesuffix("Config")
        made = dataclasses.make_dataclass(
            f"{name}EnvConfig", fields.values(), frozen=True, namespace=_env_methods(creator)
        )
    _ENV_CLASSES[creator] = made
    return made


_ENV_CLASSES: dict[Callable[..., Any], type | None] = {}


def _env_methods(creator: Callable[..., Any]) -> dict[str, Any]:
    """An env config reads as the creator's keyword arguments (`creator(**config.env)`,
    `config.env["frameskip"]`) and pickles as its creator and values (process runners)."""
    return {
        "keys": lambda self: [f.name for f in dataclasses.fields(self)],
        "__getitem__": lambda self, key: getattr(self, key),
        "__reduce__": lambda self: (_env_config, (creator, dataclasses.asdict(self))),
    }


def _env_config(creator: Callable[..., Any], values: dict[str, Any]) -> Any:
    """An env's config from its creator and values (how one is unpickled)."""
    return env_config_class(creator)(**values)  # type: ignore[misc]


def env_defaults(creator: Callable[..., Any]) -> dict[str, Any]:
    """`{key: default}` of the env's [env] keys; empty where it declares none."""
    return {f.name: f.default for f in dataclasses.fields(env_config_class(creator) or _NoKeys)}


@dataclass
class _NoKeys:
    """The [env] keys of a creator that declares none."""


def _read(source: Traversable | Path, origin: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{origin} is not valid TOML: {error}; fix the file") from error
    except OSError as error:
        raise ConfigError(f"cannot read config {origin}: {error}; check the path") from error
    return _normalized(data)


def _normalized(table: Mapping[str, Any]) -> dict[str, Any]:
    return {normalize(k): _normalized(v) if isinstance(v, Mapping) else v for k, v in table.items()}


class _Fold:
    """The keys each layer sets, parsed and checked as they arrive; defaults are never copied."""

    def __init__(self, env_name: str, creator: Callable[..., Any]) -> None:
        self.env_name = env_name
        self.env_class = env_config_class(creator)
        base = Config(env=self.env_class() if self.env_class else {})
        self.keys = key_table(base)
        self.values: dict[KeyPath, Any] = {}
        # The keys the env's shipped layers set: what a range error of a later layer quotes
        # as the default (cartpole's 99,840 steps, not the code's 10M).
        self.shipped: dict[KeyPath, Any] = {}
        self.params: dict[str, dict[str, Any]] = {}
        # Searched parameters whose `mean` a layer above default.toml chose (see `centred`).
        self.chosen_means: set[str] = set()
        self.notes: dict[KeyPath, str] = {}

    def set(self, key: KeyPath, value: Any, where: str, example: Any) -> None:
        default = self.shipped.get(key, self.keys[key].default)
        before = self.values.get(key, default)
        self.values[key] = self.keys[key].parse(key[1], value, where, default, example)
        if self.values[key] != before:  # a layer that restates a value keeps its reason
            self.notes.pop(key, None)

    def apply_file(self, data: Mapping[str, Any], origin: str, note: str | None = None) -> None:
        for section, table in data.items():
            if section not in SECTIONS:
                raise ConfigError(
                    f"unknown section [{section}] in {origin}; sections are "
                    f"{', '.join(SECTIONS)}{closest(section, SECTIONS)}"
                )
            if not isinstance(table, Mapping):
                raise ConfigError(f"[{section}] in {origin} must be a table, got {table!r}")
            for key, value in table.items():
                where = f"{flag((section, key))} (in {origin})"
                if section == "sweep" and isinstance(value, Mapping):
                    self.add_params(key, value, origin, where)
                elif (section, key) in self.keys:
                    self.set((section, key), value, where, None)
                    if note is not None:
                        self.notes[section, key] = note
                elif section == "env" and self.env_class is None:
                    if isinstance(value, Mapping):
                        raise ConfigError(
                            f"{where} is a table; env keyword arguments are bool, int, float, "
                            "str or list values"
                        )
                    # a keyword of a creator that takes any (the env checks it), typed from now
                    # on by this value
                    self.keys["env", key] = Key(type(value), value)
                    self.values["env", key] = value
                else:
                    refuse_unknown((section, key), where, "unknown key ", self.valid_flags())

    def add_params(self, key: str, table: Mapping[str, Any], origin: str, where: str) -> None:
        """`[sweep."train.gamma"]` or `[sweep.train.gamma]`: searched parameters' spec tables."""
        nested = "." not in key
        for name, spec in table.items() if nested else [(key, table)]:
            name = f"{key}.{name}" if nested else name
            if not isinstance(spec, Mapping):
                raise ConfigError(
                    f"{where}.{name.partition('.')[2]} is {spec!r}; a searched parameter is a "
                    f"table like [sweep.{name}] with distribution, min and max"
                )
            section, _, field = name.partition(".")
            if section not in ("env", *TYPED_SECTIONS) or (section, field) not in self.keys:
                spelled = f"{flag(('sweep', section, field))} (in {origin})"
                refuse_renamed(section, field, spelled)
                valid = [flag(("sweep", *k)) for k in self.keys if k[0] in TYPED_SECTIONS]
                raise ConfigError(
                    f"unknown key {spelled}: a searched parameter names a config key as "
                    f"[sweep.<section>.<key>]{closest(flag(('sweep', section, field)), valid)}"
                )
            self.params.setdefault(name, {}).update(spec)
            if "mean" in spec and origin != DEFAULT_TOML:
                self.chosen_means.add(name)

    def apply_override(self, override: Override) -> None:
        path, spelled, value = override.path, override.spelled, override.value
        if len(path) == 2 and path in self.keys:
            self.set(path, value, spelled, self.values.get(path, self.keys[path].default))
            return
        name, full = ".".join(path[1:3]), ".".join(path[1:])
        if path[0] == "sweep" and len(path) == 4 and path[3] in self.params.get(name, {}):
            old = self.params[name][path[3]]
            self.params[name][path[3]] = coerce(value, type(old), spelled, old)
            if path[3] == "mean":
                self.chosen_means.add(name)
            return
        if path[0] == "sweep" and any(p == full or p.startswith(f"{full}.") for p in self.params):
            raise ConfigError(
                f"{spelled} is a table, not a value; set its keys instead (e.g. {spelled}.KEY)"
            )
        refuse_unknown(path, spelled, "unknown config key ", self.valid_flags())

    def valid_flags(self) -> list[str]:
        flags = [flag(key) for key in self.keys]
        return flags + [
            flag(("sweep", *n.split("."), k)) for n, s in self.params.items() for k in s
        ]

    def build(self) -> Config:
        values: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
        for (section, key), value in self.values.items():
            values[section][key] = value
        vec = values["vec"]
        if self.notes.get(("vec", "num_workers"), "").startswith("derived"):
            # A later layer may have changed num_instances: keep the workers dividing it.
            vec["num_workers"] = default_num_workers(vec.get("num_instances", 1))
        sections = {name: section(**values[name]) for name, section in TYPED_SECTIONS.items()}
        env = self.env_class(**values["env"]) if self.env_class else values["env"]
        kwargs = dataclasses.asdict(env) if self.env_class else env
        params = {
            name: self.centred(name, spec, sections, kwargs) for name, spec in self.params.items()
        }
        return Config(
            **sections,
            env=env,
            sweep=parse_sweep_config({**values["sweep"], **params}),
            sweep_params=params,
            env_name=self.env_name,
            notes=dict(self.notes),
        )

    def centred(
        self, name: str, spec: dict[str, Any], sections: Mapping[str, Any], env: Mapping[str, Any]
    ) -> dict[str, Any]:
        """`spec` with its `mean` (Protein's first suggestion) at the run's own value of the
        key, unless a layer chose the mean or the value lies outside [min, max]: default.toml's
        means are generic centres."""
        section, _, key = name.partition(".")
        if name in self.chosen_means or "values" in spec:
            return spec
        value = env.get(key) if section == "env" else getattr(sections[section], key)
        low, high = spec.get("min"), spec.get("max")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return spec
        if low is None or high is None or not low <= value <= high:
            return spec
        return {**spec, "mean": value}

    def env_keys(self) -> dict[str, Any]:
        """The [env] keyword arguments so far: the defaults under the values set."""
        defaults = {k: spec.default for (section, k), spec in self.keys.items() if section == "env"}
        return defaults | {k: v for (section, k), v in self.values.items() if section == "env"}


def load_config(
    env_name: str,
    config_file: str | Path | None = None,
    overrides: Sequence[str] = (),
) -> Config:
    """Resolve the config of the registered env `env_name`: defaults, the env's sources
    (an env without a TOML of its own is made once to derive keys from its spaces), the user's
    `config_file` (TOML or PufferLib `.ini`), then `overrides` (`["--train.gamma", "0.9"]`).

    Raises:
        EnvNotFoundError: No env is registered as `env_name`; the message lists close names.
        ConfigError: Unknown section or key (with the closest valid key), or a value of the
            wrong type or out of range (naming the expected form).
        SweepConfigError: A searched parameter's spec or a [sweep] option puffer-sweep refuses.

    Example:
        >>> config = load_config("squared", overrides=["--train.learning-rate", "3e-4"])
        >>> config.train.learning_rate, config.sweep.max_cost, config.env.max_steps
        (0.0003, None, 33)
    """
    creator = env_creator(env_name)
    fold = _Fold(env_name, creator)
    fold.apply_file(_read(files("puffer.train.config") / DEFAULT_TOML, DEFAULT_TOML), DEFAULT_TOML)
    derived = False
    for source in config_sources(env_name, creator):
        if callable(source):
            for d in source(creator, fold.env_keys()):
                fold.set((d.section, d.key), d.value, f"{flag((d.section, d.key))} (derived)", None)
                fold.notes[d.section, d.key] = f"derived: {d.why}"
            derived = True
            continue
        origin = source_origin(source)
        # A TOML over derived keys says which keys it set (the derivation's notes go).
        kind = "family" if origin.startswith("families/") else "env"
        fold.apply_file(
            _read(source, origin), origin, f"{kind} config {origin}" if derived else None
        )
    fold.shipped = dict(fold.values)
    if config_file is not None:
        if Path(config_file).suffix == ".ini":  # PufferLib's own config, in our keys
            closed = hasattr(creator, "config_class")
            layer = read_pufferlib_ini(config_file, env_name, fold.env_keys(), closed_env=closed)
        else:
            layer = _read(Path(config_file), str(config_file))
        fold.apply_file(layer, str(config_file))
    for override in parse_overrides(overrides):
        fold.apply_override(override)
    return fold.build()


@dataclass(frozen=True)
class Override:
    """One `--section.key value`: the normalized key path (`("train", "learning_rate")`), the
    text after it (None for a bare flag) and the option as typed, for messages."""

    path: tuple[str, ...]
    value: str | None
    spelled: str


def parse_overrides(args: Sequence[str]) -> list[Override]:
    """Split extra command-line tokens into overrides; a value left out (the end of the line,
    or the next token is an `--option`; `-1` is a value) is None, true for a bool key.

    Raises:
        ConfigError: A token is not of the form `--section.key`.

    Example:
        >>> [o.path for o in parse_overrides(["--train.learning-rate", "1e-3", "--vec.seed=3"])]
        [('train', 'learning_rate'), ('vec', 'seed')]
    """
    overrides = []
    i = 0
    while i < len(args):
        name, eq, inline = args[i].partition("=")
        if not name.startswith("--") or "." not in name or name.endswith("."):
            raise ConfigError(
                f"unexpected argument {args[i]!r}; config overrides look like "
                "`--section.key value` (e.g. --train.learning-rate 3e-4), sections are "
                "env, vec, policy, train, sweep"
            )
        taken = 0 if eq or i + 1 == len(args) or args[i + 1].startswith("--") else 1
        value = inline if eq else (args[i + 1] if taken else None)
        overrides.append(Override(tuple(normalize(p) for p in name[2:].split(".")), value, name))
        i += 1 + taken
    return overrides
