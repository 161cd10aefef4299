"""MkDocs hooks for the docs build."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

# Names that exist only once a compiled module is loaded: the Ocean env classes and their
# config dataclasses (built from each C header's SPEC) and the binding's version. mkdocstrings
# cannot collect them, so their entries are written here from the live objects.
_LIVE = {"api/ocean.md": ("puffer.ocean", ("OceanEnv", "env_class", "frame_to_ansi", "write_png"))}


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Append an entry (heading, anchor, docstring) per live `__all__` name to _LIVE pages."""
    if page.file.src_uri not in _LIVE:
        return markdown
    module_name, static = _LIVE[page.file.src_uri]
    module = importlib.import_module(module_name)
    entries = []
    for name in module.__all__:
        if name in static:
            continue
        obj = getattr(module, name)
        doc = repr(obj) if isinstance(obj, str | dict) else inspect.getdoc(obj) or ""
        if isinstance(obj, dict):
            doc = ", ".join(f"{key}: {value.__name__}" for key, value in obj.items())
        # Raw HTML: markdown would read the underscores of an id like `__version__` as emphasis.
        heading = f'<h3 id="{module_name}.{name}"><code>{name}</code></h3>'
        entries.append(f"{heading}\n\n```text\n{doc}\n```\n")
    return markdown + "\n## Built from the compiled module\n\n" + "\n".join(entries)
