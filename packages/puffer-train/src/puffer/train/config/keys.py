"""One spec per config key, and the one parse that reads and checks a value of it.

A key is a dataclass field: its type hint is its form, its metadata its meaning and range
(`spec(default, help, check)`; `min`/`max` in an Ocean env's C-header config), gathered per
config as `Key`s (`whole.key_table`). `Key.parse` reads a value as it arrives (command-line
text, a TOML or Python value) and checks it, or raises one `ConfigError` naming the key, where
it came from and the expected form.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field
from types import UnionType
from typing import Any, Literal, NoReturn, Union, get_args, get_origin, get_type_hints

from puffer.core import APIUsageError

__all__ = [
    "RENAMED_KEYS",
    "SECTIONS",
    "Check",
    "Checked",
    "ConfigError",
    "above",
    "at_least",
    "check",
    "closest",
    "field_help",
    "flag",
    "form",
    "normalize",
    "one_of",
    "Key",
    "refuse_renamed",
    "refuse_unknown",
    "spec",
    "within",
]


class ConfigError(APIUsageError):
    """A config value of the wrong type or out of range, or an unknown key; the message names
    the key, the value and the expected form."""


@dataclass(frozen=True)
class Check:
    """A condition on a field's value beyond its type; `text` reads after the type's name."""

    test: Callable[[Any], bool]
    text: str


def at_least(low: float) -> Check:
    return Check(lambda v: v >= low, f">= {low}")


def above(low: float) -> Check:
    return Check(lambda v: v > low, f"> {low}")


def within(low: float, high: float, *, high_open: bool = False) -> Check:
    if high_open:
        return Check(lambda v: low <= v < high, f"in [{low}, {high})")
    return Check(lambda v: low <= v <= high, f"in [{low}, {high}]")


def one_of(*choices: str) -> Check:
    return Check(lambda v: v in choices, "among " + ", ".join(map(repr, choices)))


def spec(default: Any, help: str, check: Check | None = None) -> Any:
    """A typed section's field: its default, its one-line meaning and its range or choices."""
    return field(default=default, metadata={"help": help, "check": check})


def field_help(section: type) -> dict[str, str]:
    """`{field name: one-line meaning}` of a config dataclass (a C header's `doc` for Ocean)."""
    return {
        f.name: f.metadata.get("help") or f.metadata.get("doc", "")
        for f in _fields(section).values()
    }


def normalize(key: str) -> str:
    """Key spelling used inside configs: `learning-rate` and `learning_rate` are one key."""
    return key.replace("-", "_")


def flag(path: Iterable[str]) -> str:
    """The command-line spelling of a key path: ("train", "learning_rate") -> --train.learning-rate."""
    return "--" + ".".join(part.replace("_", "-") for part in path)


def closest(word: str, choices: Iterable[str]) -> str:
    """A `; did you mean X?` hint naming the closest of `choices`, or "" when none is close."""
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {match[0]}?" if match else ""


# Renamed keys, `(section, old key)`: the new key, what the old name meant elsewhere, and the
# new key's meaning (the first words of its help).
_RENAMED = {
    ("vec", "num_envs"): (
        "num_instances",
        "[env] num_envs, an env's own keyword (agents per instance in Ocean)",
        "env instances the vectorizer makes",
    ),
    ("vec", "batch_size"): (
        "instances_per_recv",
        "[train] batch_size, agent steps per iteration",
        "env instances per recv()",
    ),
}
RENAMED_KEYS = {old: new for old, (new, _, _) in _RENAMED.items()}
"""Keys that were renamed, `(section, old key): new key`; every way in refuses the old name."""


def refuse_renamed(section: str, key: str, where: str | None = None) -> None:
    """Raise `ConfigError` when `section.key` was renamed, naming the old key, the new one and
    the key the old name collided with; `where` names its origin (`--vec.num-envs (in a.toml)`).

    Example:
        >>> refuse_renamed("vec", "num_envs")
        Traceback (most recent call last):
        ...
        puffer.train.config.keys.ConfigError: vec.num_envs was renamed vec.num_instances, apart from [env] num_envs, an env's own keyword (agents per instance in Ocean); set vec.num_instances (env instances the vectorizer makes) instead
    """
    if (section, key) in _RENAMED:
        new, collided, meaning = _RENAMED[section, key]
        raise ConfigError(
            f"{f'{where}: ' if where else ''}{section}.{key} was renamed {section}.{new}, apart "
            f"from {collided}; set {section}.{new} ({meaning}) instead"
        )


SECTIONS = ("env", "vec", "policy", "train", "sweep")
"""The sections of a config TOML, in the order `puffer config` prints them."""
_SWEEP_METRIC = (
    "a sweep ranks its runs by their score: set the statistic scored with train.score_stat "
    "(e.g. --train.score-stat episode_return) instead of [sweep] metric"
)


def refuse_unknown(path: tuple[str, ...], where: str, what: str, valid: list[str]) -> NoReturn:
    """Raise for a key no layer may set: a renamed key (naming the new one), [sweep] metric, or
    a misspelling (naming the closest of the `valid` flags)."""
    if path == ("sweep", "metric"):
        raise ConfigError(f"{flag(path)}: {_SWEEP_METRIC}")
    hint = closest(flag(path), valid)
    if path[0] not in SECTIONS:
        hint += f" (sections are {', '.join(SECTIONS)})"
    # A renamed key is unknown under its old name: say what it is called now.
    refuse_renamed(*(path[1:3] if path[0] == "sweep" and len(path) > 2 else path[:2]), where)
    raise ConfigError(f"{what}{where}{hint}")


def form(hint: Any) -> tuple[type, bool, Any]:
    """`(type, optional, element hint)` of a field's type hint: `float | None` is
    `(float, True, None)`, `Literal["a", "b"]` a str, `list[int]` `(list, False, int)`."""
    args = [arg for arg in get_args(hint) if arg is not type(None)]
    if get_origin(hint) in (Union, UnionType):
        return form(args[0])[0], True, None
    if get_origin(hint) is Literal:
        return type(args[0]), False, None
    if get_origin(hint) is list or hint is list:
        return list, False, args[0] if args else None
    return hint, False, None


def type_text(hint: Any) -> str:
    """The form's name as messages and `puffer config --keys` print it: `float or none`."""
    kind, optional, _ = form(hint)
    return kind.__name__ + (" or none" if optional else "")


_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}
_ARTICLE = {bool: "a", int: "an", float: "a", str: "a", list: "a"}
_TYPE_WORDS = {bool: "true or false", int: "an int", float: "a finite float", str: "a string"}


def _read(value: Any, kind: type) -> tuple[bool, Any]:
    """`(True, value as kind)` when `value` (text or a TOML/Python value) reads as `kind`."""
    text = isinstance(value, str)
    if kind is bool:
        if isinstance(value, bool):
            return True, value
        word = value.strip().lower() if text else None
        return word in _TRUE | _FALSE, word in _TRUE
    if isinstance(value, bool) or kind is str:
        return kind is str and text, value
    if text:
        try:
            value = int(value.replace("_", "")) if kind is int else float(value)
        except ValueError:
            if kind is not int:
                return False, value
            try:
                value = float(value)
            except ValueError:
                return False, value
    if kind is int and isinstance(value, float) and value.is_integer():
        return True, int(value)  # integral floats such as 1e6 are common for step counts
    return isinstance(value, int if kind is int else (int, float)), value


def _as_list(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = None
    if isinstance(parsed, list):
        return parsed
    # `--policy.hidden 64,64` is friendlier than TOML brackets, which shells may expand.
    return [item.strip() for item in value.strip("[]").split(",") if item.strip()]


def _example(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def coerce(value: Any, hint: Any, where: str, example: Any = None) -> Any:
    """`value` read as the form `hint` gives: None (a bare flag) is true for a bool, `none` is
    None for an optional key, ints pass as floats and integral floats (`1e6`) as ints.

    Example:
        >>> coerce("1e6", int, "--train.total-timesteps"), coerce("64,32", list[int], "--x")
        (1000000, [64, 32])
    """
    kind, optional, element = form(hint)
    shown = type_text(hint)
    tip = f" (e.g. {where} {_example(example)})" if example is not None else ""
    if value is None:
        if kind is bool:
            return True
        raise ConfigError(f"{where} needs a value of type {shown}{tip}")
    if optional and isinstance(value, str) and value.strip().lower() == "none":
        return None
    if kind is list:
        items = _as_list(value)
        if not isinstance(items, list):
            raise ConfigError(f"{where} expects a {shown}, got {value!r} ({_name(value)}){tip}")
        if element is None:
            return items
        return [coerce(item, element, f"{where}[{i}]") for i, item in enumerate(items)]
    ok, read = _read(value, kind)
    if not ok:
        got = repr(value) if isinstance(value, str) else f"{value!r} ({_name(value)})"
        raise ConfigError(f"{where} expects {_ARTICLE[kind]} {shown}, got {got}{tip}")
    return float(read) if kind is float else read


def _name(value: Any) -> str:
    return "table" if isinstance(value, dict) else type_text(type(value))


@functools.cache
def _fields(owner: type) -> dict[str, dataclasses.Field]:
    return {f.name: f for f in dataclasses.fields(owner)}


@functools.cache
def _hints(owner: type) -> dict[str, Any]:
    return get_type_hints(owner)


def check(
    owner: type, name: str, value: Any, where: str | None = None, default: Any = MISSING
) -> Any:
    """A Python `value` (numpy scalars, and ints for floats, pass) as field `name` of the config
    dataclass `owner` (a typed section, or an env's config whose C-header fields carry `min` and
    `max`) stores it; else `ConfigError`, naming the key as `where` (default `Owner.name`) and
    quoting `default` (default the field's own; the fold passes the env's shipped value).

    Example:
        >>> from puffer.train.config import TrainConfig
        >>> check(TrainConfig, "gamma", 1.5)
        Traceback (most recent call last):
        ...
        puffer.train.config.keys.ConfigError: TrainConfig.gamma is 1.5; set it to a finite float in [0, 1] (discount factor); default 0.995
    """
    spec, kind = _fields(owner)[name], form(_hints(owner)[name])[0]
    rule: Check | None = spec.metadata.get("check")
    if "min" in spec.metadata:  # a C header's field: its declared range
        bounds = spec.metadata["min"], spec.metadata["max"]
        low, high = (int(b) if float(b).is_integer() else b for b in bounds)
        rule = within(low, high)
    if kind is bool or isinstance(value, bool):
        ok = kind is bool and isinstance(value, bool)
    elif kind is int:
        ok = isinstance(value, numbers.Integral)
        value = int(value) if ok else value
    elif kind is float:
        ok = isinstance(value, numbers.Real) and math.isfinite(value)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, kind)
    if ok and (rule is None or rule.test(value)):
        return value
    text = _TYPE_WORDS[kind] + (f" {rule.text}" if rule is not None else "")
    quoted = spec.default if default is MISSING else default
    raise ConfigError(
        f"{where or f'{owner.__name__}.{name}'} is {value!r}; set it to {text} "
        f"({field_help(owner)[name]}); default {quoted!r}"
    )


@dataclass(frozen=True)
class Key:
    """One settable key of a config: its form (a type hint), its value before the layer being
    read (the default, or the base config's), the config dataclass that checks its range (None:
    its form alone, for an untyped [env] keyword or a [sweep] option, which the env or
    puffer-sweep checks) and its one-line meaning."""

    hint: Any
    default: Any
    owner: type | None = None
    meaning: str = ""

    def parse(
        self, name: str, value: Any, where: str, default: Any = MISSING, example: Any = None
    ) -> Any:
        """`value` as it arrives (text, a TOML or Python value) read as the key `name` stores
        it; a range error quotes `default` (by default the key's own), a form error shows
        `example` (the key's current value; None: none)."""
        typed = coerce(value, self.hint, where, example)
        if self.owner is None:
            return typed
        return check(
            self.owner, name, typed, where, self.default if default is MISSING else default
        )


class Checked:
    """Mixin: `__post_init__` checks every field with `check`, then `_check_together`."""

    def __post_init__(self) -> None:
        for name in _fields(type(self)):
            object.__setattr__(self, name, check(type(self), name, getattr(self, name)))
        self._check_together()

    def _check_together(self) -> None:
        """Conditions across fields; none by default."""
