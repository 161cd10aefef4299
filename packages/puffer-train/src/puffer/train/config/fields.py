"""One field spec per config key: its type, meaning, range or choices, and the one parse.

A typed section's field (`TrainConfig.gamma`) is declared once, with `spec(default, meaning,
check)`; its type hint gives its `Kind`. `parse` takes a value as it arrives (text from the
command line, a TOML value, a Python value) and returns it as the field stores it, or raises
one `ConfigError` naming the key, where it came from, the expected form, the meaning and the
default; the fold (`puffer.train.config.fold`) calls it once per value, and a section's
constructor checks its fields through the same spec. Hyphens and underscores are the same
character in keys; a bool may leave out its value (`--train.anneal-lr` means true), an optional
key takes `none`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from puffer.core import APIUsageError

__all__ = [
    "RENAMED_KEYS",
    "ConfigError",
    "Kind",
    "check_field",
    "closest",
    "coerce",
    "field_help",
    "flag",
    "normalize",
    "parse",
    "refuse_renamed",
    "refuses_renamed_keys",
    "above",
    "at_least",
    "one_of",
    "spec",
    "within",
    "Check",
    "Checked",
    "type_name",
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
    return field(default=default, metadata={"help": help, "check": check})


_TYPE_WORDS = {bool: "true or false", int: "an int", float: "a finite float", str: "a string"}


def _typed(kind: type, value: Any) -> tuple[bool, Any]:
    """`(True, value as kind)` when `value` is of `kind` (ints pass as floats), else (False, _)."""
    if isinstance(value, bool) or kind is bool:
        return (kind is bool and isinstance(value, bool)), value
    if kind is int and isinstance(value, numbers.Integral):
        return True, int(value)
    if kind is float and isinstance(value, numbers.Real):
        return math.isfinite(value), float(value)
    return isinstance(value, kind), value


@functools.cache
def _kinds(section: type) -> dict[str, type]:
    return get_type_hints(section)


def check_field(
    section: type, name: str, value: Any, where: str | None = None, default: Any = MISSING
) -> Any:
    """Check one value for field `name` of the config dataclass `section`.

    Args:
        section: `TrainConfig`, `PolicyConfig` or `VecConfig`, or an env's config class
            whose fields carry `min`/`max` (an Ocean env's, from its C header).
        name: a field of it.
        value: the candidate value; numpy scalars and ints (for float fields) are accepted.
        where: names the key in the message; default `Section.name`, the CLI passes its flag.
        default: the default the message quotes; the field's own unless given (the CLI
            passes the env's shipped value, e.g. cartpole's 99,840 total_timesteps).

    Returns:
        the value as the field stores it (int, float, bool or str).

    Raises:
        ConfigError: wrong type, not finite, or out of range; the message names the key, the
            value, the expected form, the field's meaning and its default.

    Example:
        >>> from puffer.train.config import TrainConfig
        >>> check_field(TrainConfig, "gamma", 1)
        1.0
        >>> check_field(TrainConfig, "gamma", 1.5)
        Traceback (most recent call last):
        ...
        puffer.train.config.fields.ConfigError: TrainConfig.gamma is 1.5; set it to a finite float in [0, 1] (discount factor); default 0.995
    """
    spec = {f.name: f for f in dataclasses.fields(section)}[name]
    kind = _kinds(section)[name]
    check: Check | None = spec.metadata.get("check")
    if "min" in spec.metadata:  # a C header's field (an Ocean env's config class): its range
        check = within(*(int(b) if float(b).is_integer() else b for b in _bounds(spec)))
    ok, typed = _typed(kind, value)
    if ok and (check is None or check.test(typed)):
        return typed
    form = _TYPE_WORDS[kind] + (f" {check.text}" if check is not None else "")
    quoted = spec.default if default is MISSING else default
    meaning = spec.metadata.get("help") or spec.metadata.get("doc", "")
    raise ConfigError(
        f"{where or f'{section.__name__}.{name}'} is {value!r}; set it to {form} "
        f"({meaning}); default {quoted!r}"
    )


def _bounds(spec: dataclasses.Field) -> tuple[float, float]:
    return spec.metadata["min"], spec.metadata["max"]


class Checked:
    """Mixin: `__post_init__` checks every field with `check_field`, then `_check_together`."""

    def __post_init__(self) -> None:
        for spec in dataclasses.fields(self):  # type: ignore[arg-type]
            value = check_field(type(self), spec.name, getattr(self, spec.name))
            object.__setattr__(self, spec.name, value)
        self._check_together()

    def _check_together(self) -> None:
        """Conditions across fields; none by default."""


def field_help(section: type) -> dict[str, str]:
    """`{field name: one-line meaning}` for a config dataclass."""
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(section)}


RENAMED_KEYS: dict[tuple[str, str], str] = {
    ("vec", "num_envs"): "num_instances",
    ("vec", "batch_size"): "instances_per_recv",
}
"""Keys that were renamed, `(section, old key): new key`. Every way a key enters (a TOML file,
an override, `Config.from_dict`, a section's constructor) refuses the old name with
`refuse_renamed`'s error."""

# The section class of each section with renamed keys, which names their new keys' meanings.
_RENAMED_IN: dict[str, type] = {}
# Why each old name went: it meant something else in another section.
_COLLIDED_WITH = {
    ("vec", "num_envs"): "[env] num_envs, an env's own keyword (agents per instance in Ocean)",
    ("vec", "batch_size"): "[train] batch_size, agent steps per epoch",
}


def refuse_renamed(section: str, key: str, where: str | None = None) -> None:
    """Raise when `section.key` is a renamed key (`RENAMED_KEYS`); do nothing otherwise.

    Args:
        section: the key's section, e.g. "vec".
        key: the key as it arrived (underscores).
        where: names the key and its origin, e.g. "--vec.num-envs (in my.toml)".

    Raises:
        ConfigError: naming the old key, the new one and the key the old name collided with.

    Example:
        >>> refuse_renamed("vec", "num_envs")
        Traceback (most recent call last):
        ...
        puffer.train.config.fields.ConfigError: vec.num_envs was renamed vec.num_instances, apart from [env] num_envs, an env's own keyword (agents per instance in Ocean); set vec.num_instances (env instances the vectorizer makes) instead
    """
    new = RENAMED_KEYS.get((section, key))
    if new is None:
        return
    meaning = field_help(_RENAMED_IN[section])[new].split(" (")[0].split(";")[0]
    origin = f"{where}: " if where else ""
    raise ConfigError(
        f"{origin}{section}.{key} was renamed {section}.{new}, apart from "
        f"{_COLLIDED_WITH[section, key]}; set {section}.{new} ({meaning}) instead"
    )


def refuses_renamed_keys(section: str) -> Callable[[type], type]:
    """Class decorator: `cls(old_key=...)` raises `refuse_renamed`'s error, not a TypeError."""

    def decorate(cls: type) -> type:
        _RENAMED_IN[section] = cls
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            for key in kwargs:
                refuse_renamed(section, key)
            init(self, *args, **kwargs)

        cls.__init__ = __init__  # type: ignore[misc]
        return cls

    return decorate


_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


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


@dataclass(frozen=True)
class Kind:
    """The form a config value takes, and so how command-line text is parsed into it.

    Attributes:
        name: "bool", "int", "float", "str", "list" or "table".
        optional: None is a value too (typed `X | None`); the command line spells it `none`.
        element: The kind of a list's items, when known.
    """

    name: str
    optional: bool = False
    element: Kind | None = None

    @classmethod
    def of(cls, value: Any) -> Kind:
        """The kind of a sample value, e.g. an env constructor's default.

        Example:
            >>> Kind.of([64, 64])
            Kind(name='list', optional=False, element=Kind(name='int', optional=False, element=None))
        """
        if isinstance(value, bool):
            return cls("bool")
        if isinstance(value, Mapping):
            return cls("table")
        if isinstance(value, list):
            return cls("list", element=cls.of(value[0]) if value else None)
        return cls(type(value).__name__)

    @classmethod
    def of_hint(cls, hint: Any) -> Kind:
        """The kind of a dataclass field's resolved type hint: `float`, `str | None`,
        `Literal["a", "b"]` (a str) or `list[int]`.

        Example:
            >>> Kind.of_hint(float | None)
            Kind(name='float', optional=True, element=None)
        """
        args = [arg for arg in get_args(hint) if arg is not type(None)]
        if get_origin(hint) in (Union, UnionType):
            return dataclasses.replace(cls.of_hint(args[0]), optional=True)
        if get_origin(hint) is Literal:
            return cls.of(args[0])
        if get_origin(hint) is list:
            return cls("list", element=cls.of_hint(args[0]) if args else None)
        return cls("bool" if hint is bool else hint.__name__)

    def __str__(self) -> str:
        return self.name + (" or none" if self.optional else "")


def type_name(value: Any) -> str:
    """The config type of a value: bool, int, float, str, list or table (none for None)."""
    return "none" if value is None else Kind.of(value).name


def coerce(value: Any, kind: Kind, where: str, example: Any = None) -> Any:
    """Convert `value` (text from the command line, or a TOML value) to `kind`.

    Args:
        value: The new value; a str from the command line, any TOML value from a file, or None
            for a bare flag.
        kind: The expected form.
        where: Names the key and its origin for messages, e.g. "--train.learning-rate".
        example: A valid value shown in messages (usually the default).

    Returns:
        The value as `kind`; ints are accepted for floats, integral floats (`1e6`) for ints, and
        the text `none` for None where `kind.optional`.

    Raises:
        ConfigError: The value does not parse as `kind`; the message names both.

    Example:
        >>> coerce("1e6", Kind("int"), "--train.total-timesteps")
        1000000
        >>> coerce("[64, 64]", Kind("list", element=Kind("int")), "--policy.hidden")
        [64, 64]
    """
    expected = kind.name
    hint = f" (e.g. {where} {_example(example)})" if example is not None else ""
    if expected == "table":
        raise ConfigError(
            f"{where} is a table, not a value; set its keys instead (e.g. {where}.KEY)"
        )
    if value is None:
        if expected == "bool":
            return True
        raise ConfigError(f"{where} needs a value of type {kind}{hint}")
    text = isinstance(value, str)
    if kind.optional and text and value.strip().lower() == "none":
        return None
    converted = _CONVERTERS[expected](value, text)
    if converted is _INVALID:
        got = repr(value) if text else f"{value!r} ({type_name(value)})"
        raise ConfigError(f"{where} expects {_ARTICLE[expected]} {kind}, got {got}{hint}")
    if expected == "list" and kind.element is not None:
        converted = [
            coerce(item, kind.element, f"{where}[{i}]") for i, item in enumerate(converted)
        ]
    return converted


_INVALID = object()
_ARTICLE = {"bool": "a", "int": "an", "float": "a", "str": "a", "list": "a"}


def _example(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _to_bool(value: Any, text: bool) -> Any:
    if isinstance(value, bool):
        return value
    if text and value.strip().lower() in _TRUE:
        return True
    if text and value.strip().lower() in _FALSE:
        return False
    return _INVALID


def _to_int(value: Any, text: bool) -> Any:
    if isinstance(value, bool):
        return _INVALID
    if isinstance(value, int):
        return value
    if text:
        try:
            return int(value.replace("_", ""))
        except ValueError:
            try:
                value = float(value)
            except ValueError:
                return _INVALID
    # Integral floats such as 1e6 are common for step counts.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return _INVALID


def _to_float(value: Any, text: bool) -> Any:
    if isinstance(value, bool):
        return _INVALID
    if isinstance(value, int | float):
        return float(value)
    if text:
        try:
            return float(value)
        except ValueError:
            return _INVALID
    return _INVALID


def _to_str(value: Any, text: bool) -> Any:
    return value if isinstance(value, str) else _INVALID


def _to_list(value: Any, text: bool) -> Any:
    if isinstance(value, list):
        return value
    if not text:
        return _INVALID
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = None
    if isinstance(parsed, list):
        return parsed
    # `--policy.hidden 64,64` is friendlier than TOML brackets, which shells may expand.
    return [item.strip() for item in value.strip("[]").split(",") if item.strip()]


_CONVERTERS = {
    "bool": _to_bool,
    "int": _to_int,
    "float": _to_float,
    "str": _to_str,
    "list": _to_list,
}


def parse(
    section: type | None, key: str, value: Any, kind: Kind, where: str, default: Any, example: Any
) -> Any:
    """A value as it arrives (command-line text, a TOML or Python value), as the key stores it.

    Args:
        section: the typed section (`TrainConfig`) or the env's config class (an Ocean
            env's C header) whose field `key` is, or None for a key typed by `kind` alone
            (an env keyword without a config class field, a [sweep] option: the env or
            puffer-sweep checks the rest).
        key: the key, e.g. "learning_rate".
        value: the new value; None for a bare flag (true for a bool).
        kind: the key's form.
        where: names the key and its origin, e.g. "--train.gamma (in my.toml)".
        default: the value a range error quotes (the env's shipped one).
        example: a valid value a parse error shows (the key's current value), or None.

    Raises:
        ConfigError: the value does not parse as `kind`, or is out of the field's range.
    """
    typed = coerce(value, kind, where, example)
    if section is None:
        return typed
    return check_field(section, key, typed, where, default)
