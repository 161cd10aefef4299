"""puffer.vector: Serial, Multiprocessing and Ray vectorizers over the buffer contract."""

from __future__ import annotations

from puffer.vector.base import EnvSpec, Vectorizer, default_num_workers
from puffer.vector.factory import BACKENDS, make
from puffer.vector.multiprocessing import (
    Multiprocessing,
    remove_orphaned_blocks,
)
from puffer.vector.serial import Serial

__version__ = "0.1.0"

__all__ = [
    "BACKENDS",
    "EnvSpec",
    "Multiprocessing",
    "Ray",
    "Serial",
    "Vectorizer",
    "default_num_workers",
    "make",
    "remove_orphaned_blocks",
]


def __getattr__(name: str):
    # Ray is an optional extra and slow to import; load it only when asked for.
    if name == "Ray":
        from puffer.vector.ray import Ray

        return Ray
    raise AttributeError(f"module 'puffer.vector' has no attribute {name!r}")
