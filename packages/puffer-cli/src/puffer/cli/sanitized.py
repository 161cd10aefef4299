"""`python -m puffer.cli.sanitized MODULE ARGS...`: the `puffer` command with MODULE, a
sanitizer build of the Ocean extension, standing in for the installed one.

`puffer asan ARGS...` starts it with the sanitizer runtime preloaded (an ASan library must
come first in a process); the installed optimized extension is never loaded here.
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["main"]

OCEAN_MODULE = "puffer.ocean._ocean"


def main() -> None:
    """Load MODULE as `puffer.ocean._ocean`, then run `puffer ARGS...`."""
    path, args = sys.argv[1], sys.argv[2:]
    spec = importlib.util.spec_from_file_location(OCEAN_MODULE, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Before puffer.ocean imports its extension, so it finds this one.
    sys.modules[OCEAN_MODULE] = module
    from puffer.cli.main import main as puffer

    sys.argv = ["puffer", *args]
    puffer()


if __name__ == "__main__":
    main()
