"""Layered TOML configs: defaults, the env's file, `--config FILE`, then command-line overrides.

The bottom layer is the typed defaults: puffer-train's `TrainConfig`, `PolicyConfig` and
`VecConfig` field defaults, the env creator's keyword defaults for [env], and the shipped
`default.toml` on top of them. Each higher layer may only set keys a lower layer defines, with a
value of the same type (bool, int, float, str or list); the exceptions are [env] in files (a file
may add keyword arguments the creator accepts through `**kwargs`) and searched parameters in
[sweep] (a file may declare `[sweep.train.gamma]` for any existing key). The default TOML and one
TOML per env ship inside this package, in `puffer/cli/configs/`.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import tomli_w

from puffer.cli.overrides import ConfigError, closest, coerce, flag, normalize, parse_overrides
from puffer.core import env_creator
from puffer.train.config import Config as RunConfig
from puffer.train.config import PolicyConfig, TrainConfig, VecConfig

__all__ = ["SECTIONS", "Config", "ConfigError", "config_names", "env_defaults", "load_config"]

SECTIONS = ("env", "vec", "policy", "train", "sweep")
_TOML_SCALARS = (bool, int, float, str)
# [sweep] options whose "unset" TOML cannot express; 0 / "" stand for None (see default.toml).
_SWEEP_NONE = {"max_cost": 0.0, "steps_key": ""}


def _config_dir() -> Traversable:
    return files("puffer.cli") / "configs"


def config_names() -> list[str]:
    """Env names that have a shipped TOML config (the default excluded), sorted."""
    return sorted(
        entry.name.removesuffix(".toml")
        for entry in _config_dir().iterdir()
        if entry.name.endswith(".toml") and entry.name != "default.toml"
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


def _base_layer(creator: Callable[..., Any]) -> dict[str, dict[str, Any]]:
    base: dict[str, dict[str, Any]] = {
        "env": env_defaults(creator),
        "vec": dataclasses.asdict(VecConfig()),
        "policy": dataclasses.asdict(PolicyConfig()),
        "train": dataclasses.asdict(TrainConfig()),
        "sweep": {},
    }
    default = _read(_config_dir() / "default.toml", "default.toml")
    _merge(base, default, "default.toml", open_paths={("env",), ("sweep",)})
    return base


def _leaves(table: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*prefix, key))
        else:
            yield (*prefix, key)


def _is_sweep_param(path: tuple[str, ...], root: Mapping[str, Any]) -> bool:
    """`("sweep", "train", "gamma")` declares a searched parameter when train.gamma exists."""
    return (
        len(path) == 3
        and path[0] == "sweep"
        and path[1] != "sweep"
        and path[1] in root
        and path[2] in root[path[1]]
    )


def _merge(
    base: dict[str, Any],
    update: Mapping[str, Any],
    origin: str,
    open_paths: set[tuple[str, ...]],
    root: dict[str, Any] | None = None,
    prefix: tuple[str, ...] = (),
) -> None:
    """Merge `update` into `base` in place, checking every value against the one it replaces.

    `open_paths` are the tables that may gain new keys from this layer.
    """
    root = base if root is None else root
    for key, value in update.items():
        path = (*prefix, key)
        where = f"{flag(path)} (in {origin})"
        if key not in base:
            if not prefix:
                raise ConfigError(
                    f"unknown section [{key}] in {origin}; sections are "
                    f"{', '.join(SECTIONS)}{closest(key, SECTIONS)}"
                )
            if prefix in open_paths or _is_sweep_param(path, root):
                base[key] = copy.deepcopy(value)
                continue
            valid = [flag(p) for p in _leaves(root)]
            raise ConfigError(f"unknown key {where}{closest(flag(path), valid)}")
        if isinstance(base[key], dict):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{where} must be a table, got {value!r}")
            _merge(base[key], value, origin, open_paths, root, path)
        else:
            base[key] = coerce(value, base[key], where)


def _apply_overrides(data: dict[str, Any], args: Sequence[str]) -> None:
    for override in parse_overrides(args):
        node: Any = data
        for depth, part in enumerate(override.path):
            if not isinstance(node, dict) or part not in node:
                valid = [flag(p) for p in _leaves(data)]
                hint = closest(flag(override.path), valid)
                if depth == 0:
                    hint += f" (sections are {', '.join(SECTIONS)})"
                raise ConfigError(f"unknown config key {override.spelled}{hint}")
            if depth == len(override.path) - 1:
                node[part] = coerce(override.value, node[part], override.spelled)
            node = node[part]


@dataclass(frozen=True)
class Config:
    """A resolved, type-checked config.

    Attributes:
        env_name: The env it is for, as given to `puffer.core.make`.
        run: [train], [policy], [vec] and [env] as puffer-train's typed `Config`.
        data: The whole resolved config as plain TOML data, [sweep] included.
    """

    env_name: str
    run: RunConfig
    data: dict[str, dict[str, Any]]

    def to_toml(self) -> str:
        """The resolved config as TOML text, which `--config FILE` accepts back."""
        return tomli_w.dumps(self.data)

    def sweep_section(self) -> dict[str, Any]:
        """[sweep] ready for `puffer.sweep.parse_sweep_config` (0 / "" options made None)."""
        section = copy.deepcopy(self.data["sweep"])
        for key, unset in _SWEEP_NONE.items():
            if section.get(key) == unset:
                section[key] = None
        return section

    def with_params(self, params: Mapping[str, Any]) -> Config:
        """A copy with dotted `section.key` values replaced, e.g. a sweep's suggestion.

        Raises:
            ConfigError: A key is unknown or a value has the wrong type.
        """
        data = copy.deepcopy(self.data)
        for name, value in params.items():
            section, _, key = name.partition(".")
            if section not in data or key not in data[section]:
                raise ConfigError(f"sweep parameter {name!r} is not a config key; fix [sweep]")
            data[section][key] = coerce(value, data[section][key], f"--{name}")
        return _build(self.env_name, data)


def load_config(
    env_name: str,
    config_file: str | Path | None = None,
    overrides: Sequence[str] = (),
) -> Config:
    """Resolve the config of `env_name`: defaults, env TOML, `config_file`, then `overrides`.

    Args:
        env_name: A registered env name; its shipped TOML is used when there is one.
        config_file: Optional user TOML layered on top of the shipped configs.
        overrides: Command-line tokens such as ["--train.learning-rate", "3e-4"].

    Returns:
        The typed `Config`.

    Raises:
        EnvNotFoundError: No env is registered as `env_name`; the message lists close names.
        ConfigError: Unknown section or key (with the closest valid key), or a value of the
            wrong type (naming the expected type).

    Example:
        >>> config = load_config("squared", overrides=["--train.learning-rate", "3e-4"])
        >>> config.run.train.learning_rate
        0.0003
    """
    creator = env_creator(env_name)
    data = _base_layer(creator)
    env_file = _env_config_file(env_name, creator)
    if env_file.is_file():
        layer = _read(env_file, env_file.name)
        _merge(data, layer, env_file.name, open_paths={("env",)})
    if config_file is not None:
        path = Path(config_file)
        _merge(data, _read(path, str(path)), str(path), open_paths={("env",)})
    _apply_overrides(data, overrides)
    return _build(env_name, data)


def _env_config_file(env_name: str, creator: Callable[..., Any]) -> Traversable:
    """The env's shipped TOML: ours in `puffer/cli/configs/`, else the one its creator names.

    Packages outside the CLI (puffer-envs) ship their TOMLs beside their envs and point at
    them with a `config_file` attribute on the creator.
    """
    own = _config_dir() / f"{env_name}.toml"
    return own if own.is_file() else getattr(creator, "config_file", own)


def _build(env_name: str, data: dict[str, Any]) -> Config:
    run = RunConfig(
        train=TrainConfig(**data["train"]),
        policy=PolicyConfig(**data["policy"]),
        vec=VecConfig(**data["vec"]),
        env=dict(data["env"]),
    )
    return Config(env_name=env_name, run=run, data=data)
