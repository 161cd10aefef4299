"""MkDocs hooks for the docs build (kept out of the site by `exclude_docs`): entries written
from live objects where mkdocstrings cannot collect them, and the config reference tables."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from griffe_extensions import field_meaning

# Names that exist only once a compiled module is loaded: the Ocean env classes and their
# config dataclasses (built from each C header's SPEC) and the binding's version. mkdocstrings
# cannot collect them, so their entries are written here from the live objects.
_LIVE = {"api/ocean.md": ("puffer.ocean", ("OceanEnv", "env_class", "frame_to_ansi", "write_png"))}


# The config reference: a table per section, in place of this marker.
_CONFIG_PAGE = "api/train-config.md"
_CONFIG_MARKER = "<!-- config tables: written by docs/hooks.py from the live dataclasses -->"


# The package pages include their README (`--8<-- "packages/puffer-train/README.md"`), whose
# links into the site are written from the README's folder (`../../docs/results/train.md#faults`,
# so that they work on a forge too). The hook puts the README in itself, with those links
# pointed at the site's pages from docs/packages/, before the site checks every link (the
# snippet extension would expand it only after that check).
_ROOT = Path(__file__).resolve().parents[1]
_README_SNIPPET = re.compile(r'^--8<-- "([^"]+/README\.md)"$', re.M)
_README_LINK = re.compile(r"\]\((?:\.\./)+docs/")


def _readme(match: re.Match[str]) -> str:
    return _README_LINK.sub("](../", (_ROOT / match.group(1)).read_text(encoding="utf-8"))


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """Point the included READMEs' links at the site's pages, write the config tables into the
    config page, and append an entry (heading, anchor, docstring) per live `__all__` name to
    _LIVE pages."""
    if page.file.src_uri.startswith("packages/"):
        markdown = _README_SNIPPET.sub(_readme, markdown)
    if page.file.src_uri == _CONFIG_PAGE:
        return markdown.replace(_CONFIG_MARKER, _config_tables())
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


def _config_tables() -> str:
    """One table per section of `puffer.train.Config`: key, type, default, meaning."""
    from puffer.train.config import PolicyConfig, TrainConfig, VecConfig

    sections = (("train", TrainConfig), ("policy", PolicyConfig), ("vec", VecConfig))
    out = []
    for name, section in sections:
        first = (inspect.getdoc(section) or "").splitlines()[0]
        rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
        for field in dataclasses.fields(section):
            kind = field.type if isinstance(field.type, str) else field.type.__name__
            default = _toml(field.default)
            meaning = field_meaning(field).replace("|", "\\|")
            rows.append(f"| `{field.name}` | {kind} | `{default}` | {meaning} |")
        out.append(f"## [{name}]\n\n{first}\n\n" + "\n".join(rows) + "\n")
    return "\n".join(out)


def _toml(value: Any) -> str:
    """A default as it is written in a TOML file."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, int) and abs(value) >= 10_000:
        return f"{value:_}"  # TOML reads 10_000_000 as it reads 10000000
    return repr(value)
