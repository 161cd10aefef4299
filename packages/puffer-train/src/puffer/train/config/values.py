"""Command-line overrides: `--section.key value` tokens, and values typed by their defaults.

An override names a path into the config (`--train.learning-rate 3e-4`, `--vec.backend=serial`,
`--sweep.train.learning-rate.max 0.1`). Hyphens and underscores are the same character in keys.
Each value is parsed as the key's `Kind` (from its dataclass field's type, or from the value it
replaces): bool, int, float, str or list; `none` where the key may be unset. A bool override may
leave out its value (`--train.anneal-lr` means true). A bad value raises the same `ConfigError`
whether it comes from a TOML file, the command line or Python.
"""

from __future__ import annotations

import dataclasses
import difflib
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from puffer.train.config.sections import ConfigError

__all__ = [
    "Kind",
    "Override",
    "closest",
    "coerce",
    "flag",
    "normalize",
    "parse_overrides",
    "type_name",
]

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


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
