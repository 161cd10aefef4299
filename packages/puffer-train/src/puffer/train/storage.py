"""Writing a run's files: atomic replacement, and one clear error when the disk says no.

Every file a run writes goes through here: `atomic_write` for the files replaced whole
(checkpoint.pt, config.json, config.toml, a truncated metrics.jsonl, eval videos) and
`open_append` for appends. Neither writes through a symlink: a replaced file's name is renamed
over (a symlink there is replaced, its target untouched), and an append opens with O_NOFOLLOW,
so a link planted in a data dir (metrics.jsonl -> ~/.bashrc) cannot aim a run's writes. A write
that fails (a full disk, a read-only or vanished directory) becomes a `StorageError` naming the
file, the reason and the space left on its disk, instead of a raw `OSError` (or torch's
`inline_container.cc` error, which is how a full disk reaches `torch.save`). Files already in
place are never touched by a failed write: the previous checkpoint stays whole.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from puffer.core import PufferError

__all__ = [
    "TEMP_SUFFIX",
    "StorageError",
    "atomic_write",
    "check_inside",
    "free_bytes",
    "open_append",
    "refuse_symlink",
    "temp_files",
    "writing",
]

# `atomic_write` writes `.<name>.<random>.tmp` beside its target, then renames it over the target.
TEMP_SUFFIX = ".tmp"


class StorageError(PufferError):
    """A run file that could not be written: the disk is full, or the directory is not writable."""


def free_bytes(path: str | Path) -> int:
    """Bytes free to this user on the file system holding `path` (or its nearest existing parent)."""
    path = Path(path).absolute()
    existing = next(p for p in (path, *path.parents) if p.exists())
    return shutil.disk_usage(existing).free


def _size(count: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if count < 1000:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1000
    return f"{count:.1f} TB"


def _error(path: Path, reason: str) -> StorageError:
    return StorageError(
        f"cannot write {path}: {reason}; {_size(free_bytes(path.parent))} free on its disk. "
        "Files written before are intact: free some space (or set train.data_dir elsewhere) "
        "and run again, with train.resume to continue this run"
    )


# torch.save reports a failed write of its zip container as a RuntimeError from its writer
# class, or (a write the disk took only part of: "unexpected pos 64 vs 0") from the writer's
# source file.
_TORCH_WRITER = ("PytorchStreamWriter", "inline_container.cc")


@contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn a failed write of `path` inside the block into a `StorageError`.

    Raises:
        StorageError: an `OSError` (ENOSPC, EROFS, EACCES, ...) or torch's zip-writer error.
    """
    try:
        yield
    except OSError as error:
        raise _error(path, error.strerror or str(error)) from error
    except RuntimeError as error:
        if not any(name in str(error) for name in _TORCH_WRITER):
            raise
        raise _error(path, str(error).splitlines()[0]) from error


def atomic_write(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """`write(file)` into a temp file beside `path`, fsync, then rename it over `path`.

    Raises:
        StorageError: the temp file could not be written (it is removed; `path` is untouched).
    """
    with writing(path):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as file:
                write(file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def check_inside(path: Path, root: str | Path) -> None:
    """Raise `StorageError` unless `path`, symlinks resolved, lies inside `root` (resolved too:
    the data dir itself may be a link the user made)."""
    real, top = Path(path).resolve(), Path(root).resolve()
    if real != top and top not in real.parents:
        raise StorageError(
            f"{path} leads to {real}, outside the data dir {top} (a symlink on the way); puffer "
            "writes only inside train.data_dir: remove the link, or use another name"
        )


def refuse_symlink(path: Path) -> None:
    """Raise `StorageError` when `path` is a symlink (dangling or not): puffer writes no file
    through one."""
    if path.is_symlink():
        raise StorageError(
            f"{path} is a symlink (to {os.readlink(path)}); puffer writes no run file through "
            "a symlink, which could aim the write anywhere: remove it, or use another run"
        )


def open_append(path: Path) -> BinaryIO:
    """`path` opened to append, unbuffered, created if missing, never through a symlink.

    Raises:
        StorageError: `path` is a symlink, or the open failed (a full disk, no permission).
    """
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
        )
    except OSError as error:
        if error.errno == errno.ELOOP:
            refuse_symlink(path)
        raise _error(path, error.strerror or str(error)) from error
    return os.fdopen(fd, "ab", buffering=0)


def temp_files(directory: Path, name: str) -> list[Path]:
    """The temp files `atomic_write` left beside `directory / name` when killed mid-write."""
    return sorted(directory.glob(f".{name}.*{TEMP_SUFFIX}"))
