"""puffer.cli: the `puffer` command, a shell over puffer-train, puffer-sweep and puffer-view."""

from __future__ import annotations

__version__ = "0.1.0"

__all__: list[str] = []
