"""Command-line overrides: `--section.key value` tokens, and values typed by their defaults.

An override names a path into the config (`--train.learning-rate 3e-4`, `--vec.backend=serial`,
`--sweep.train.learning-rate.max 0.1`). Hyphens and underscores are the same character in keys.
Each value is parsed as the type of the value it replaces: bool, int, float, str or list. A bool
override may leave out its value (`--train.compile` means true).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from puffer.core import PufferError

__all__ = [
    "ConfigError",
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


class ConfigError(PufferError):
    """A config file or override names an unknown key or gives a value of the wrong type."""


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


def type_name(value: Any) -> str:
    """The config type of a default value: bool, int, float, str, list or table."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def coerce(value: Any, default: Any, where: str) -> Any:
    """Convert `value` (text from the command line, or a TOML value) to the type of `default`.

    Args:
        value: The new value; a str from the command line, any TOML value from a file, or None
            for a bare flag.
        default: The value it replaces; its type is the expected type.
        where: Names the key and its origin for messages, e.g. "--train.learning-rate".

    Returns:
        The value as `type(default)`; ints are accepted for floats, and integral floats (`1e6`)
        for ints.

    Raises:
        ConfigError: The value does not parse as the expected type; the message names both.

    Example:
        >>> coerce("1e6", 10, "--train.total-timesteps")
        1000000
        >>> coerce("[64, 64]", [128], "--policy.hidden")
        [64, 64]
    """
    expected = type_name(default)
    if expected == "table":
        raise ConfigError(
            f"{where} is a table, not a value; set its keys instead "
            f"(e.g. {where}.{next(iter(default), 'key')} ...)"
        )
    if value is None:
        if expected == "bool":
            return True
        raise ConfigError(f"{where} needs a value of type {expected}; e.g. {where} {default!r}")
    text = isinstance(value, str)
    converted = _CONVERTERS[expected](value, text)
    if converted is _INVALID:
        got = repr(value) if text else f"{value!r} ({type_name(value)})"
        raise ConfigError(
            f"{where} expects {_ARTICLE[expected]} {expected} (like {_example(default)}), got {got}"
        )
    if expected == "list" and default:
        element = default[0]
        converted = [coerce(item, element, f"{where}[{i}]") for i, item in enumerate(converted)]
    return converted


_INVALID = object()
_ARTICLE = {"bool": "a", "int": "an", "float": "a", "str": "a", "list": "a"}


def _example(default: Any) -> str:
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, str):
        return repr(default)
    return str(default)


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
