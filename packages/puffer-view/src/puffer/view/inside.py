"""Reading files under a data dir without ever leaving it: what the dashboard reads and serves.

A data dir may hold anyone's files (a folder of runs someone sent, unpacked from an archive).
Every file the dashboard reads (metrics, configs, sweep stores) or hands out (eval videos, in the
server and in `--export`) is opened here: one directory at a time from the data dir, each with
O_NOFOLLOW, so a symlink anywhere below the data dir (to /etc/passwd, to ~/.ssh) is refused,
even one swapped in while it is read. The data dir itself may be a symlink: the user named it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["is_file_inside", "open_inside", "read_inside", "subdirs_inside"]

_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def _parts(relative: str) -> list[str] | None:
    """The names of a relative POSIX path; None for an absolute one or one with an empty,
    "." or ".." part (a path that could leave the data dir or name it twice)."""
    parts = relative.split("/")
    return None if any(part in ("", ".", "..") for part in parts) else parts


def _open_dir(root: Path, parts: list[str]) -> int | None:
    """An fd of the directory `root/parts...`, reached without following a symlink."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    for part in parts:
        try:
            inner = os.open(part, _NOFOLLOW | os.O_DIRECTORY, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = inner
    return fd


def _open_file(root: Path, relative: str) -> int | None:
    """An fd of the regular file `root/relative`, or None (see `read_inside`)."""
    parts = _parts(relative)
    if parts is None:
        return None
    directory = _open_dir(root, parts[:-1])
    if directory is None:
        return None
    try:
        # O_NONBLOCK: a FIFO planted under the name must not block the open.
        fd = os.open(parts[-1], _NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
    except OSError:
        return None
    finally:
        os.close(directory)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def open_inside(root: Path, relative: str) -> int | None:
    """A read-only fd of the regular file `root/relative` (the caller closes it), or None when
    `read_inside` would return None."""
    return _open_file(root, relative)


def read_inside(root: Path, relative: str) -> bytes | None:
    """The bytes of the regular file `root/relative` (a "/"-separated path), or None when
    there is none: missing, not a regular file, a path with "..", or a symlink on the way."""
    fd = _open_file(root, relative)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as file:
        return file.read()


def is_file_inside(root: Path, relative: str) -> bool:
    """True when `read_inside(root, relative)` would return bytes (without reading them)."""
    fd = _open_file(root, relative)
    if fd is None:
        return False
    os.close(fd)
    return True


def subdirs_inside(root: Path, relative: str) -> list[str]:
    """The names of the real directories (no symlinks) in `root/relative` ("" for `root`),
    sorted; none when it is missing or cannot be read."""
    parts = [] if relative == "" else _parts(relative)
    fd = None if parts is None else _open_dir(root, parts)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as entries:
            return sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    except OSError:
        return []
    finally:
        os.close(fd)
