"""Layered configs: typed defaults, the env's TOML, `--config FILE`, then command-line overrides.

The bottom layer is typed and lives in code, never in TOML: puffer-train's `TrainConfig`,
`PolicyConfig` and `VecConfig` for [train], [policy] and [vec]; puffer-sweep's `SweepConfig` for
the [sweep] options (`max_cost` and `steps_key` default to a real None); the env creator's
keyword defaults for [env]. Each layer above records only the keys it sets, each parsed as the
key's type and checked (type, range, finiteness) the moment it arrives, with the key, the file
or flag it came from and the expected form in the message; the sections are built once at the
end, so the dataclasses run their own checks too.

Layers: the shipped `default.toml` (only the default search space: `[sweep.train.gamma]` tables),
the env's shipped TOML, `--config FILE`, then `--section.key value` overrides. An env without a
TOML of its own gets, in its place, keys derived from its spaces (`puffer.cli.derive`) and then
its family's TOML (`configs/families/`, matched by Gymnasium id); `Config.notes` says why each
of those keys has its value, and `to_toml` prints that beside it. A layer may only
set keys that exist, except that a file may add [env] keyword arguments the creator takes through
`**kwargs`, and a file may declare a searched parameter `[sweep.<section>.<key>]` for any key.
TOML has no null, so an optional key left out keeps None; `--sweep.max-cost none` unsets one.
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
from typing import Any, get_type_hints

import tomli_w

from puffer.cli.derive import Derived, derive_defaults, family_config, workers_for
from puffer.cli.overrides import (
    ConfigError,
    Kind,
    Override,
    closest,
    coerce,
    flag,
    normalize,
    parse_overrides,
)
from puffer.core import env_creator
from puffer.sweep import SweepConfig, parse_sweep_config
from puffer.train.config import Config as RunConfig
from puffer.train.config import PolicyConfig, TrainConfig, VecConfig, check_field, field_help

__all__ = ["SECTIONS", "Config", "ConfigError", "config_names", "env_defaults", "load_config"]

SECTIONS = ("env", "vec", "policy", "train", "sweep")
DEFAULT_TOML = "default.toml"
_TYPED: dict[str, type] = {"vec": VecConfig, "policy": PolicyConfig, "train": TrainConfig}
_TOML_SCALARS = (bool, int, float, str)
# [sweep] options are SweepConfig's fields; `space` is built from the parameter tables, and
# `metric` is not set here: a sweep ranks its runs by their score, whose statistic is
# `train.score_stat` (puffer.train.score), so one key decides it for runs and sweeps alike.
_NOT_SWEEP_OPTIONS = ("space", "metric")
_SWEEP_OPTIONS = {
    name: Kind.of_hint(hint)
    for name, hint in get_type_hints(SweepConfig).items()
    if name not in _NOT_SWEEP_OPTIONS
}
_SWEEP_METRIC = (
    "a sweep ranks its runs by their score: set the statistic scored with train.score_stat "
    "(e.g. --train.score-stat episode_return) instead of [sweep] metric"
)


def _kinds(section: type) -> dict[str, Kind]:
    return {name: Kind.of_hint(hint) for name, hint in get_type_hints(section).items()}


_FIELD_KINDS = {name: _kinds(section) for name, section in _TYPED.items()}


def _config_dir() -> Traversable:
    return files("puffer.cli") / "configs"


def config_names() -> list[str]:
    """Env names that have a shipped TOML config (the default excluded), sorted."""
    return sorted(
        entry.name.removesuffix(".toml")
        for entry in _config_dir().iterdir()
        if entry.name.endswith(".toml") and entry.name != DEFAULT_TOML
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


@dataclass(frozen=True)
class Config:
    """A resolved, checked config.

    Attributes:
        env_name: The env it is for, as given to `puffer.core.make`.
        run: [train], [policy], [vec] and [env] as puffer-train's typed `Config`.
        sweep: [sweep] as puffer-sweep's typed `SweepConfig` (options and search space).
        sweep_params: The searched parameters' spec tables by dotted key (e.g.
            "train.gamma": {"distribution": "logit", ...}), as `Param.from_spec` read them;
            kept to print them back.
        notes: Why a key has its value, by (section, key), for keys derived from the env's
            spaces or set by a family TOML (and not set again by a later layer).
    """

    env_name: str
    run: RunConfig
    sweep: SweepConfig
    sweep_params: dict[str, dict[str, Any]]
    notes: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)

    def to_toml(self) -> str:
        """The resolved config as TOML text, which `--config FILE` accepts back.

        Every key is written; an unset optional key (None, which TOML cannot hold) is written
        as a comment, and a derived or family key is followed by a comment saying why.
        """
        options = {name: getattr(self.sweep, name) for name in _SWEEP_OPTIONS}
        tables: list[tuple[str, Mapping[str, Any]]] = [
            ("env", self.run.env),
            *((name, dataclasses.asdict(getattr(self.run, name))) for name in _TYPED),
            ("sweep", options),
            *((f"sweep.{name}", spec) for name, spec in self.sweep_params.items()),
        ]
        lines = [f"# The resolved config of {self.env_name} (puffer config {self.env_name})."]
        for header, table in tables:
            lines += ["", f"[{header}]"]
            for key, value in table.items():
                note = self.notes.get((header, key))
                if value is None:
                    lines.append(f"# {key}: unset (None); TOML has no null, so it is left out")
                else:
                    line = tomli_w.dumps({key: value}).rstrip("\n")
                    lines.append(f"{line}  # {note}" if note else line)
        return "\n".join(lines) + "\n"

    def keys(self) -> Iterator[tuple[tuple[str, str], Any, Kind, str]]:
        """Every settable key but the parameter tables: `((section, key), value, kind, meaning)`.

        Example:
            >>> config = load_config("squared")
            >>> next(row for row in config.keys() if row[0] == ("sweep", "max_cost"))[1:3]
            (None, Kind(name='float', optional=True, element=None))
        """
        for key, value in self.run.env.items():
            yield ("env", key), value, Kind.of(value), "env constructor keyword"
        for name, section in _TYPED.items():
            meanings = field_help(section)
            for key, kind in _FIELD_KINDS[name].items():
                yield (name, key), getattr(getattr(self.run, name), key), kind, meanings[key]
        meanings = _documented_attributes(SweepConfig)
        for key, kind in _SWEEP_OPTIONS.items():
            yield ("sweep", key), getattr(self.sweep, key), kind, meanings.get(key, "")

    def with_params(self, params: Mapping[str, Any]) -> Config:
        """A copy with dotted `section.key` values replaced, e.g. a sweep's suggestion.

        Raises:
            ConfigError: A key is unknown, or a value has the wrong type or is out of range.
        """
        changes: dict[str, dict[str, Any]] = {name: {} for name in (*_TYPED, "env")}
        for name, value in params.items():
            section, _, key = name.partition(".")
            kind = _known_kind(section, key, self.run.env)
            if kind is None:
                raise ConfigError(f"sweep parameter {name!r} is not a config key; fix [sweep]")
            where = flag((section, key))
            # An error quotes the value the sweep's base config has.
            base = self.run.env if section == "env" else vars(getattr(self.run, section))
            changes[section][key] = _checked(
                section, key, coerce(value, kind, where), where, base.get(key)
            )
        run = RunConfig(
            env={**self.run.env, **changes["env"]},
            **{
                name: dataclasses.replace(getattr(self.run, name), **changes[name])
                for name in _TYPED
            },
        )
        return dataclasses.replace(self, run=run)


def _known_kind(section: str, key: str, env: Mapping[str, Any]) -> Kind | None:
    """The kind of config key `section.key` (an [env] key is typed by its current value)."""
    if section in _FIELD_KINDS:
        return _FIELD_KINDS[section].get(key)
    if section == "env":
        return Kind.of(env[key]) if key in env else None
    return None


def _checked(section: str, key: str, value: Any, where: str, default: Any) -> Any:
    """Range and finiteness checks of the typed sections ([env] values are the env's to check);
    an error quotes `default`, the value the key has for this env without the bad setting."""
    if section in _TYPED:
        return check_field(_TYPED[section], key, value, where, default)
    return value


class _Layers:
    """The keys each layer sets, typed and checked as they arrive; defaults are never copied."""

    def __init__(self, env_name: str, creator: Callable[..., Any]) -> None:
        self.env_name = env_name
        self.env = env_defaults(creator)
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
        if section == "sweep":
            if key == "metric":
                raise ConfigError(f"{flag(('sweep', key))}: {_SWEEP_METRIC}")
            return _SWEEP_OPTIONS.get(key)
        return _known_kind(section, key, self.env_keys())

    def valid_flags(self) -> list[str]:
        flags = [flag((s, k)) for s in _TYPED for k in _FIELD_KINDS[s]]
        flags += [flag(("env", k)) for k in self.env_keys()]
        flags += [flag(("sweep", k)) for k in _SWEEP_OPTIONS]
        flags += [
            flag(("sweep", *name.split("."), k)) for name, spec in self.params.items() for k in spec
        ]
        return flags

    def set(self, section: str, key: str, value: Any, where: str, example: Any) -> None:
        kind = self.kind(section, key)
        assert kind is not None  # callers look the key up first
        shipped = self.shipped[section]
        default = shipped[key] if key in shipped else self._default(section, key)
        self.values[section][key] = _checked(
            section, key, coerce(value, kind, where, example), where, default
        )
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
        if section not in (*_TYPED, "env") or self.kind(section, key) is None:
            valid = [flag(("sweep", s, k)) for s in _TYPED for k in _FIELD_KINDS[s]]
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
        if len(path) == 2 and section in SECTIONS and self.kind(section, path[1]) is not None:
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
        return _field_default(_TYPED[section], key)

    def build(self) -> Config:
        vec = self.values["vec"]
        if self.notes.get(("vec", "num_workers"), "").startswith("derived"):
            # A later layer may have changed num_envs: keep the workers dividing it.
            vec["num_workers"] = workers_for(vec.get("num_envs", 1))
        run = RunConfig(
            env=self.env_keys(),
            **{name: section(**self.values[name]) for name, section in _TYPED.items()},
        )
        params = {name: self._centred(name, spec, run) for name, spec in self.params.items()}
        sweep = parse_sweep_config({**self.values["sweep"], **params})
        return Config(self.env_name, run, sweep, params, dict(self.notes))

    def _centred(self, name: str, spec: dict[str, Any], run: RunConfig) -> dict[str, Any]:
        """`spec` with its `mean` (Protein's first suggestion) at the run's own value of the
        key, the env's shipped config, unless a layer chose the mean or the value lies
        outside [min, max]; default.toml's means are generic centres."""
        section, _, key = name.partition(".")
        if name in self.chosen_means or "values" in spec:
            return spec
        value = run.env.get(key) if section == "env" else getattr(getattr(run, section), key)
        low, high = spec.get("min"), spec.get("max")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return spec
        if low is None or high is None or not low <= value <= high:
            return spec
        return {**spec, "mean": value}


def _documented_attributes(cls: type) -> dict[str, str]:
    """`{name: meaning}` from the `Attributes:` block of a Google-style class docstring."""
    meanings: dict[str, str] = {}
    block = (inspect.getdoc(cls) or "").partition("Attributes:\n")[2]
    for line in block.splitlines():
        if line and not line.startswith(" "):
            break  # the next section of the docstring
        name, colon, text = line.strip().partition(": ")
        if line.startswith("    ") and not line.startswith("     ") and colon:
            meanings[name] = text
        elif meanings and line.strip():
            last = next(reversed(meanings))
            meanings[last] += " " + line.strip()
    return meanings


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
        env_name: A registered env name; its shipped TOML is used when there is one.
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
        >>> config.run.train.learning_rate, config.sweep.max_cost
        (0.0003, None)
    """
    creator = env_creator(env_name)
    layers = _Layers(env_name, creator)
    layers.apply_file(_read(_config_dir() / DEFAULT_TOML, DEFAULT_TOML), DEFAULT_TOML)
    env_file = _env_config_file(env_name, creator)
    if env_file.is_file():
        layers.apply_file(_read(env_file, env_file.name), env_file.name)
    else:
        derivation = derive_defaults(creator, layers.env_keys())
        layers.apply_derived(derivation.keys)
        family = family_config(env_name, derivation.continuous)
        if family is not None:
            origin = f"families/{family.name}"
            layers.apply_file(_read(family, origin), origin, note=f"family config {origin}")
    layers.ship()
    if config_file is not None:
        path = Path(config_file)
        layers.apply_file(_read(path, str(path)), str(path))
    for override in parse_overrides(overrides):
        layers.apply_override(override)
    return layers.build()


def _env_config_file(env_name: str, creator: Callable[..., Any]) -> Traversable:
    """The env's shipped TOML: ours in `puffer/cli/configs/`, else the one its creator names.

    Packages outside the CLI (puffer-envs) ship their TOMLs beside their envs and point at
    them with a `config_file` attribute on the creator.
    """
    own = _config_dir() / f"{env_name}.toml"
    return own if own.is_file() else getattr(creator, "config_file", own)
