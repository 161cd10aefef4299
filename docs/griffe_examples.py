"""A griffe extension for the docs build: puffer docstrings title their doctests `Example:`,
which Google style (as griffe reads it) only knows as `Examples:`; without this they would
render as prose, `>>>` as nested quotes."""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename `Example:` section titles to `Examples:` in every loaded docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
