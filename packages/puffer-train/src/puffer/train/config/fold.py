"""The fold: `load_config` folds `[default.toml, *sources, --config FILE, overrides]`.

The bottom layer is typed and lives in code, never in TOML: the `[train]`, `[policy]` and
`[vec]` dataclasses; puffer-sweep's `SweepConfig` for the [sweep] options (`max_cost` and
`steps_key` default to a real None); the env creator's keyword defaults for [env] (an Ocean
env's C-header config class types them and bounds their ranges). Each layer above records only
the keys it sets, each parsed and checked once as it arrives (`fields.parse`: the key, the file
or flag it came from and the expected form in the message); the sections are built at the end.

Layers: `default.toml` beside this module (only the default search space: `[sweep.train.gamma]`
tables), the env's sources in order (`sources.config_sources`: its own TOML; or keys derived
from its spaces, its family's TOML, its member TOML), `--config FILE` (`read_config_file`),
then `--section.key value` overrides. A TOML over derived keys notes the keys it sets;
`Config.notes` says why each derived or family key has its value, and `to_toml` prints that
beside it. A layer may only set keys that exist, except that a file may add [env] keyword
arguments the creator takes through `**kwargs`, and a file may declare a searched parameter
`[sweep.<section>.<key>]` for any key. TOML has no null, so an optional key left out keeps
None; `--sweep.max-cost none` unsets one.
"""

from __future__ import annotations

import dataclasses
import inspect
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from puffer.core import env_creator
from puffer.sweep import SweepConfig, parse_sweep_config
from puffer.train.config.derive import Derived
from puffer.train.config.fields import (
    ConfigError,
    Kind,
    closest,
    coerce,
    flag,
    normalize,
    parse,
    refuse_renamed,
)
from puffer.train.config.sections import FIELD_KINDS, SWEEP_OPTIONS, TYPED_SECTIONS, known_kind
from puffer.train.config.sources import config_sources, source_origin
from puffer.train.config.whole import Config
from puffer.train.pufferlib_ini import read_pufferlib_ini
from puffer.vector import default_num_workers

__all__ = [
    "DEFAULT_TOML",
    "SECTIONS",
    "Override",
    "env_defaults",
    "load_config",
    "parse_overrides",
    "read_config_file",
]

SECTIONS = ("env", "vec", "policy", "train", "sweep")
"""The sections of a config TOML, in the order `puffer config` prints them."""
DEFAULT_TOML = "default.toml"
_TOML_SCALARS = (bool, int, float, str)
_SWEEP_METRIC = (
    "a sweep ranks its runs by their score: set the statistic scored with train.score_stat "
    "(e.g. --train.score-stat episode_return) instead of [sweep] metric"
)


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


def env_defaults(creator: Callable[..., Any]) -> dict[str, Any]:
    """Keyword defaults of an env creator that a TOML can hold.

    Reads the creator's signature (keyword parameters whose defaults are bool, int, float or
    str) and, for creators with a `config_class` dataclass (Ocean envs), that class's fields.
    `buf` and `render_mode` are the CLI's to choose and are left out.

    Returns:
        `{key: default}`; empty for creators that only take `**kwargs`.
    """
    defaults: dict[str, Any] = {}
    try:
        parameters = inspect.signature(creator).parameters.values()
    except (TypeError, ValueError):
        parameters = []
    for parameter in parameters:
        if parameter.name in ("buf", "render_mode"):
            continue
        if isinstance(parameter.default, _TOML_SCALARS):
            defaults[parameter.name] = parameter.default
    config_class = getattr(creator, "config_class", None)
    if dataclasses.is_dataclass(config_class):
        instance = config_class()
        for field in dataclasses.fields(config_class):
            value = getattr(instance, field.name)
            if isinstance(value, _TOML_SCALARS) or isinstance(value, list):
                defaults[field.name] = value
    return defaults


class _Layers:
    """The keys each layer sets, typed and checked as they arrive; defaults are never copied."""

    def __init__(self, env_name: str, creator: Callable[..., Any]) -> None:
        self.env_name = env_name
        self.env = env_defaults(creator)
        # The env's own config class (an Ocean env's C header) types its [env] keys and
        # bounds their ranges, as the typed sections' fields do theirs.
        header = getattr(creator, "config_class", None)
        self.header: type | None = header if dataclasses.is_dataclass(header) else None
        self.values: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
        self.params: dict[str, dict[str, Any]] = {}
        # Searched parameters whose `mean` a layer above default.toml set (env TOML, --config,
        # an override): those keep it; the others start from the run's own value.
        self.chosen_means: set[str] = set()
        self.notes: dict[tuple[str, str], str] = {}
        # The keys the env's shipped layers set (default.toml, its TOML or derived and family
        # keys): what a range error quotes as the default of a later layer's bad value.
        self.shipped: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}

    def ship(self) -> None:
        """Mark the layers so far as the env's shipped config."""
        self.shipped = {name: dict(values) for name, values in self.values.items()}

    def env_keys(self) -> dict[str, Any]:
        return {**self.env, **self.values["env"]}

    def kind(self, section: str, key: str) -> Kind | None:
        """The key's kind; None for an unknown (or renamed: `refuse_renamed` says) key."""
        if section == "sweep":
            if key == "metric":
                raise ConfigError(f"{flag(('sweep', key))}: {_SWEEP_METRIC}")
            return SWEEP_OPTIONS.get(key)
        return known_kind(section, key, self.env_keys())

    def valid_flags(self) -> list[str]:
        flags = [flag((s, k)) for s in TYPED_SECTIONS for k in FIELD_KINDS[s]]
        flags += [flag(("env", k)) for k in self.env_keys()]
        flags += [flag(("sweep", k)) for k in SWEEP_OPTIONS]
        flags += [
            flag(("sweep", *name.split("."), k)) for name, spec in self.params.items() for k in spec
        ]
        return flags

    def set(self, section: str, key: str, value: Any, where: str, example: Any) -> None:
        kind = self.kind(section, key)
        assert kind is not None  # callers look the key up first
        shipped = self.shipped[section]
        default = shipped[key] if key in shipped else self._default(section, key)
        before = self.values[section].get(key, default)
        owner = TYPED_SECTIONS.get(section)
        if section == "env" and self.header is not None and key in _field_names(self.header):
            owner = self.header
        value = parse(owner, key, value, kind, where, default, example)
        self.values[section][key] = value
        if value != before:  # a layer that restates a value leaves the reason for it standing
            self.notes.pop((section, key), None)

    def apply_derived(self, derived: list[Derived]) -> None:
        for d in derived:
            self.set(d.section, d.key, d.value, f"{flag((d.section, d.key))} (derived)", None)
            self.notes[(d.section, d.key)] = f"derived: {d.why}"

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
                    for name, spec in _param_tables(key, value, where):
                        self.add_param(name, spec, origin)
                elif section == "env" and key not in self.env_keys():
                    # a keyword the creator takes through **kwargs; the env checks it
                    self.values["env"][key] = _toml_value(value, where)
                elif self.kind(section, key) is None:
                    refuse_renamed(section, key, where)
                    raise ConfigError(
                        f"unknown key {where}{closest(flag((section, key)), self.valid_flags())}"
                    )
                else:
                    self.set(section, key, value, where, None)
                    if note is not None:
                        self.notes[(section, key)] = note

    def add_param(self, name: str, spec: Mapping[str, Any], origin: str) -> None:
        section, _, key = name.partition(".")
        where = f"{flag(('sweep', section, key))} (in {origin})"
        if section not in (*TYPED_SECTIONS, "env") or self.kind(section, key) is None:
            refuse_renamed(section, key, where)
            valid = [flag(("sweep", s, k)) for s in TYPED_SECTIONS for k in FIELD_KINDS[s]]
            raise ConfigError(
                f"unknown key {where}: a searched parameter names a config key as "
                f"[sweep.<section>.<key>]{closest(flag(('sweep', section, key)), valid)}"
            )
        self.params.setdefault(name, {}).update(spec)
        if "mean" in spec and origin != DEFAULT_TOML:
            self.chosen_means.add(name)

    def apply_override(self, override: Override) -> None:
        path, spelled = override.path, override.spelled
        section = path[0]
        known = len(path) == 2 and section in SECTIONS
        if known and self.kind(section, path[1]) is not None:
            self.set(section, path[1], override.value, spelled, self._current(section, path[1]))
            return
        if section == "sweep" and self._is_param_table(path[1:]):
            coerce(override.value, Kind("table"), spelled)  # raises: a table is not a value
        if section == "sweep" and len(path) == 4:
            spec = self.params.get(f"{path[1]}.{path[2]}", {})
            if path[3] in spec:
                old = spec[path[3]]
                spec[path[3]] = coerce(override.value, Kind.of(old), spelled, old)
                if path[3] == "mean":
                    self.chosen_means.add(f"{path[1]}.{path[2]}")
                return
        # A renamed key is unknown under its old name: say what it is called now.
        refuse_renamed(*(path[1:3] if section == "sweep" and len(path) > 2 else path[:2]), spelled)
        hint = closest(flag(path), self.valid_flags())
        if section not in SECTIONS:
            hint += f" (sections are {', '.join(SECTIONS)})"
        raise ConfigError(f"unknown config key {spelled}{hint}")

    def _is_param_table(self, parts: tuple[str, ...]) -> bool:
        """`("train",)` or `("train", "gamma")` when they hold searched parameter tables."""
        name = ".".join(parts)
        return any(p == name or p.startswith(f"{name}.") for p in self.params)

    def _current(self, section: str, key: str) -> Any:
        if key in self.values[section]:
            return self.values[section][key]
        return self._default(section, key)

    def _default(self, section: str, key: str) -> Any:
        if section == "env":
            return self.env.get(key)
        if section == "sweep":
            return _field_default(SweepConfig, key)
        return _field_default(TYPED_SECTIONS[section], key)

    def build(self) -> Config:
        vec = self.values["vec"]
        if self.notes.get(("vec", "num_workers"), "").startswith("derived"):
            # A later layer may have changed num_instances: keep the workers dividing it.
            vec["num_workers"] = default_num_workers(vec.get("num_instances", 1))
        sections = {name: section(**self.values[name]) for name, section in TYPED_SECTIONS.items()}
        env = self.env_keys()
        params = {
            name: self._centred(name, spec, sections, env) for name, spec in self.params.items()
        }
        return Config(
            **sections,
            env=env,
            sweep=parse_sweep_config({**self.values["sweep"], **params}),
            sweep_params=params,
            env_name=self.env_name,
            notes=dict(self.notes),
        )

    def _centred(
        self, name: str, spec: dict[str, Any], sections: Mapping[str, Any], env: Mapping[str, Any]
    ) -> dict[str, Any]:
        """`spec` with its `mean` (Protein's first suggestion) at the run's own value of the
        key, the env's shipped config, unless a layer chose the mean or the value lies
        outside [min, max]; default.toml's means are generic centres."""
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


def _field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _field_default(section: type, key: str) -> Any:
    return next(f.default for f in dataclasses.fields(section) if f.name == key)


def _param_tables(
    key: str, value: Mapping[str, Any], where: str
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """`("train.gamma", spec)` from `[sweep."train.gamma"]` or `[sweep.train.gamma]`."""
    if "." in key:
        yield key, value
        return
    for name, spec in value.items():
        if not isinstance(spec, Mapping):
            raise ConfigError(
                f"{where}.{name} is {spec!r}; a searched parameter is a table like "
                f"[sweep.{key}.{name}] with distribution, min and max"
            )
        yield f"{key}.{name}", spec


def _toml_value(value: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        raise ConfigError(
            f"{where} is a table; env keyword arguments are bool, int, float, str or list values"
        )
    return value


def load_config(
    env_name: str,
    config_file: str | Path | None = None,
    overrides: Sequence[str] = (),
) -> Config:
    """Resolve the config of `env_name`: defaults, env TOML, `config_file`, then `overrides`.

    Checks every value (type, range, finiteness) on the way. An env without a TOML of its own
    is made once (then closed) to derive keys from its spaces, under its family TOML if any.

    Args:
        env_name: A registered env name; the TOML its registration names is used when there is
            one.
        config_file: Optional user TOML layered on top of the shipped configs.
        overrides: Command-line tokens such as ["--train.learning-rate", "3e-4"].

    Returns:
        The typed `Config`.

    Raises:
        EnvNotFoundError: No env is registered as `env_name`; the message lists close names.
        ConfigError: Unknown section or key (with the closest valid key), or a value of the
            wrong type or out of range (naming the expected form).
        SweepConfigError: A searched parameter's spec or a [sweep] option puffer-sweep refuses.

    Example:
        >>> config = load_config("squared", overrides=["--train.learning-rate", "3e-4"])
        >>> config.train.learning_rate, config.sweep.max_cost
        (0.0003, None)
    """
    creator = env_creator(env_name)
    layers = _Layers(env_name, creator)
    layers.apply_file(
        _read(files("puffer.train.config") / DEFAULT_TOML, DEFAULT_TOML), DEFAULT_TOML
    )
    derived = False
    for source in config_sources(env_name, creator):
        if callable(source):
            layers.apply_derived(source(creator, layers.env_keys()))
            derived = True
            continue
        origin = source_origin(source)
        # A TOML over derived keys says which keys it set (the derivation's notes go).
        kind = "family" if origin.startswith("families/") else "env"
        note = f"{kind} config {origin}" if derived else None
        layers.apply_file(_read(source, origin), origin, note=note)
    layers.ship()
    if config_file is not None:
        if Path(config_file).suffix == ".ini":  # PufferLib's own config, in our keys
            closed = hasattr(creator, "config_class")
            layer = read_pufferlib_ini(
                Path(config_file), env_name, layers.env_keys(), closed_env=closed
            )
        else:
            layer = read_config_file(config_file)
        layers.apply_file(layer, str(config_file))
    for override in parse_overrides(overrides):
        layers.apply_override(override)
    return layers.build()


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The layer a `--config FILE` holds: `{section: {key: value}}`, keys normalized.

    Raises:
        ConfigError: the file cannot be read or is not valid TOML; the message names it.
    """
    return _read(Path(path), str(path))


@dataclass(frozen=True)
class Override:
    """One `--section.key value` from the command line.

    Attributes:
        path: Normalized key path, e.g. ("train", "learning_rate").
        value: The raw text after the option, or None for a bare flag (`--train.compile`).
        spelled: The option as the user typed it, for messages.
    """

    path: tuple[str, ...]
    value: str | None
    spelled: str


def parse_overrides(args: Sequence[str]) -> list[Override]:
    """Split extra command-line tokens into overrides.

    Args:
        args: Tokens left over after the command's own options, e.g.
            ["--train.learning-rate", "3e-4", "--vec.backend=serial", "--train.compile"].

    Returns:
        One `Override` per option, in order. A value that is missing (end of the line or the
        next token is another `--option`) is None, meaning "true" for a bool key.

    Raises:
        ConfigError: A token is not of the form `--section.key`.

    Example:
        >>> [o.path for o in parse_overrides(["--train.learning-rate", "1e-3", "--vec.seed=3"])]
        [('train', 'learning_rate'), ('vec', 'seed')]
    """
    overrides = []
    i = 0
    while i < len(args):
        token = args[i]
        name, eq, inline = token.partition("=")
        if not name.startswith("--") or "." not in name or name.endswith("."):
            raise ConfigError(
                f"unexpected argument {token!r}; config overrides look like "
                "`--section.key value` (e.g. --train.learning-rate 3e-4), sections are "
                "env, vec, policy, train, sweep"
            )
        path = tuple(normalize(part) for part in name[2:].split("."))
        if eq:
            value: str | None = inline
            i += 1
        elif i + 1 < len(args) and not _is_option(args[i + 1]):
            value = args[i + 1]
            i += 2
        else:
            value = None
            i += 1
        overrides.append(Override(path, value, name))
    return overrides


def _is_option(token: str) -> bool:
    # A negative number (`--train.gamma -1`) is a value, not the next option.
    return token.startswith("--")
