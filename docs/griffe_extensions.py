"""Griffe extensions for the docs build (kept out of the site by `exclude_docs`).

- `ExampleSections`: puffer docstrings title their doctests `Example:`, which Google style (as
  griffe reads it) only knows as `Examples:`; without this they would render as prose, `>>>` as
  nested quotes.
- `ConfigFields`: the config dataclasses declare each field as `_f(default, help, check)`;
  griffe reads that call as the field's value, so the page would show source. This puts the
  default in its place and the help (with the allowed range or choices) in the field's
  docstring, from the live dataclass, so every field reads `name: type = default` and its
  meaning.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from typing import Any

import griffe

from puffer.train.config.keys import _TYPE_WORDS

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename `Example:` section titles to `Examples:` in every loaded docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)


def field_meaning(field: dataclasses.Field) -> str:
    """A config field's one-line meaning, then its allowed values when the type is not enough
    (worded as the config's own error messages word them)."""
    meaning = field.metadata.get("help", "")
    meaning = meaning[:1].upper() + meaning[1:].rstrip(".") + "."
    check = field.metadata.get("check")
    if check is not None:
        meaning += f" Takes {_TYPE_WORDS[_kind(field)]} {check.text}."
    return meaning


def _kind(field: dataclasses.Field) -> type:
    return {"int": int, "float": float, "bool": bool, "str": str}[str(field.type)]


class ConfigFields(griffe.Extension):
    """Give `_f(...)` dataclass fields their plain default and their help as a docstring."""

    def on_class_members(self, *, cls: griffe.Class, **kwargs: Any) -> None:
        if not any(_declared_with_f(member) for member in cls.members.values()):
            return
        live = getattr(importlib.import_module(cls.module.path), cls.name)
        for field in dataclasses.fields(live):
            member = cls.members.get(field.name)
            if member is None or not _declared_with_f(member):
                continue
            member.value = repr(field.default)
            member.docstring = griffe.Docstring(field_meaning(field), parent=member)


def _declared_with_f(member: Any) -> bool:
    value = getattr(member, "value", None)
    return isinstance(value, griffe.ExprCall) and str(value.function) == "_f"
