"""The subcommands of `puffer`; each module exposes `register(app)`."""

from __future__ import annotations

__all__: list[str] = []
