"""`python -m puffer.cli` runs the `puffer` command (what torchrun launches for multi-GPU)."""

from __future__ import annotations

from puffer.cli.main import main

__all__: list[str] = []

main()
