"""`Config`: a whole run's config, its TOML sections together, and its text form.

    [env]     keyword arguments of the env's creator       Config.env (the env's config)
    [vec]     how the env is vectorized                    Config.vec (VecConfig)
    [policy]  the network                                  Config.policy (PolicyConfig)
    [train]   PPO, the optimizer, bookkeeping              Config.train (TrainConfig)
    [sweep]   how `puffer sweep` searches its keys         Config.sweep (puffer-sweep's)

`load_config` (puffer.train.config.fold) builds one from an env's TOML files and overrides;
`Config()` is the typed defaults alone. A checkpoint and a run directory store `to_dict()`, the
sections a run trains with; `to_toml()` is what `puffer config ENV` prints and `--config FILE`
reads back.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import tomli_w

from puffer.sweep import SweepConfig
from puffer.train.config.keys import (
    ConfigError,
    Key,
    field_help,
    flag,
    form,
    refuse_renamed,
    type_text,
)
from puffer.train.config.sections import (
    SWEEP_OPTIONS,
    TYPED_SECTIONS,
    PolicyConfig,
    TrainConfig,
    VecConfig,
)

__all__ = ["Config", "key_table"]


@dataclass
class Config:
    """A whole run: the typed sections, the env creator's keyword arguments and the sweep.

    Attributes:
        train: [train] as a `TrainConfig`.
        policy: [policy] as a `PolicyConfig`.
        vec: [vec] as a `VecConfig`.
        env: [env], the env's config: an instance of the dataclass `load_config` builds from
            the creator's keyword parameters and, for an Ocean env, its C header's config
            fields (typed and ranged as declared there); a dict for a creator that takes any
            keyword (`gym-*`, `pettingzoo-*`: Gymnasium's and PettingZoo's constructors check
            them) and for a config built in Python without an env.
        sweep: [sweep] as puffer-sweep's `SweepConfig` (options and search space); None for a
            config built in Python without one.
        sweep_params: The searched parameters' spec tables by dotted key (e.g.
            "train.gamma": {"distribution": "logit", ...}), kept to print them back.
        env_name: The registered env the config was resolved for, if any.
        notes: Why a key has its value, by (section, key), for keys derived from the env's
            spaces or set by a family TOML (and not set again by a later layer).
    """

    train: TrainConfig = field(default_factory=TrainConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    vec: VecConfig = field(default_factory=VecConfig)
    env: Any = field(default_factory=dict)
    sweep: SweepConfig | None = None
    sweep_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    env_name: str | None = None
    notes: dict[tuple[str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, section in TYPED_SECTIONS.items():
            if not isinstance(getattr(self, name), section):
                raise ConfigError(
                    f"Config.{name} is {getattr(self, name)!r}; pass a {section.__name__}(...) "
                    "(or build the whole config with Config.from_dict)"
                )
        typed = dataclasses.is_dataclass(self.env) and not isinstance(self.env, type)
        keyed = isinstance(self.env, dict) and all(isinstance(k, str) for k in self.env)
        if not (typed or keyed):
            raise ConfigError(
                f"Config.env is {self.env!r}; pass a dict of the env constructor's keyword "
                "arguments"
            )

    def env_kwargs(self) -> dict[str, Any]:
        """[env] as the keyword arguments of the env's creator."""
        return dict(self.env) if isinstance(self.env, dict) else dataclasses.asdict(self.env)

    def to_dict(self) -> dict[str, Any]:
        """The sections a run trains with, as a JSON-ready nested dict: [train], [policy],
        [vec] and [env] (what the run directory and checkpoints store)."""
        return {
            "train": dataclasses.asdict(self.train),
            "policy": dataclasses.asdict(self.policy),
            "vec": dataclasses.asdict(self.vec),
            "env": self.env_kwargs(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Config:
        """Inverse of `to_dict`, checked like the constructors.

        Raises:
            ConfigError: an unknown key (naming it and the known ones) or a bad value.
        """
        kwargs: dict[str, Any] = {"env": dict(data.get("env", {}))}
        for name, section in TYPED_SECTIONS.items():
            values = dict(data.get(name, {}))
            for key in values:
                refuse_renamed(name, key, f"config section [{name}]")
            known = {f.name for f in dataclasses.fields(section)}
            unknown = sorted(set(values) - known)
            if unknown:
                raise ConfigError(
                    f"config section [{name}] has unknown keys {unknown}; known keys: "
                    f"{sorted(known)}"
                )
            kwargs[name] = section(**values)
        return cls(**kwargs)

    def to_toml(self) -> str:
        """The config as TOML text, which `--config FILE` accepts back.

        Every key is written; an unset optional key (None, which TOML cannot hold) is written
        as a comment, and a derived or family key is followed by a comment saying why.
        """
        tables: list[tuple[str, Mapping[str, Any]]] = [
            ("env", self.env_kwargs()),
            *((name, dataclasses.asdict(getattr(self, name))) for name in TYPED_SECTIONS),
        ]
        if self.sweep is not None:
            tables.append(("sweep", {name: getattr(self.sweep, name) for name in SWEEP_OPTIONS}))
            tables += [(f"sweep.{name}", spec) for name, spec in self.sweep_params.items()]
        name = self.env_name
        title = f"The resolved config of {name} (puffer config {name})." if name else "A run."
        lines = [f"# {title}"]
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

    def keys(self) -> Iterator[tuple[tuple[str, str], Any, str, str]]:
        """Every settable key but the parameter tables (and [sweep] for a config without one):
        `((section, key), value, form, meaning)`, the form as `type_text` names it.

        Example:
            >>> from puffer.train.config import load_config
            >>> config = load_config("squared")
            >>> next(row for row in config.keys() if row[0] == ("sweep", "max_cost"))[1:3]
            (None, 'float or none')
        """
        for path, key in key_table(self).items():
            if path[0] != "sweep" or self.sweep is not None:
                yield path, key.default, type_text(key.hint), key.meaning

    def with_params(self, params: Mapping[str, Any]) -> Config:
        """A copy with dotted `section.key` values replaced, e.g. a sweep's suggestion; an error
        quotes this config's value as the default. A float for an int key (a point of a
        continuous scale, e.g. `total_timesteps` searched on a log scale) is rounded to the
        nearest int.

        Raises:
            ConfigError: A key is unknown, or a value has the wrong type or is out of range.
        """
        known = key_table(self)
        changes: dict[str, dict[str, Any]] = {name: {} for name in (*TYPED_SECTIONS, "env")}
        for name, value in params.items():
            section, _, key = name.partition(".")
            refuse_renamed(section, key, f"sweep parameter {name!r}")
            if section not in changes or (section, key) not in known:
                raise ConfigError(f"sweep parameter {name!r} is not a config key; fix [sweep]")
            entry = known[section, key]
            if isinstance(value, float) and form(entry.hint)[0] is int:
                value = round(value)  # a continuous scale's point (log, linear) on an int key
            changes[section][key] = entry.parse(key, value, flag((section, key)))
        sections = {
            name: dataclasses.replace(getattr(self, name), **changes[name])
            for name in TYPED_SECTIONS
        }
        if isinstance(self.env, dict):
            env = {**self.env, **changes["env"]}
        else:
            env = dataclasses.replace(self.env, **changes["env"])
        return dataclasses.replace(self, env=env, **sections)


def key_table(config: Config) -> dict[tuple[str, str], Key]:
    """Every settable key of `config` (a [sweep] without parameter tables: puffer-sweep's
    defaults) by `(section, key)`, its value in `config` as its default; a dict [env] is typed
    by its values."""
    table: dict[tuple[str, str], Key] = {}
    for name in ("env", *TYPED_SECTIONS):
        section = getattr(config, name)
        if isinstance(section, dict):
            for key, value in section.items():
                table[name, key] = Key(type(value), value, None, _ENV_KEYWORD)
            continue
        meanings = field_help(type(section))
        for key, hint in get_type_hints(type(section)).items():
            meaning = meanings[key] or (_ENV_KEYWORD if name == "env" else "")
            table[name, key] = Key(hint, getattr(section, key), type(section), meaning)
    sweep = config.sweep
    meanings = _documented_attributes(SweepConfig)
    for key, hint in SWEEP_OPTIONS.items():
        value = getattr(sweep, key) if sweep is not None else _SWEEP_DEFAULTS[key]
        table["sweep", key] = Key(hint, value, None, meanings.get(key, ""))
    return table


_ENV_KEYWORD = "env constructor keyword"
_SWEEP_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(SweepConfig) if f.name in SWEEP_OPTIONS
}


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
