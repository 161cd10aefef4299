"""Names of `Multiprocessing`'s shared-memory blocks, and the removal of those left behind.

A block is named after the process that created it:

    puffer-vec-<pid>-<pid namespace inode>-<start time in clock ticks>-<random>-<array>

so anyone can tell whether its owner still runs: the same pid in the same pid namespace, started
at the same tick (a pid reused by a later process has another start time). `close()` and the
`weakref.finalize` at exit unlink a vectorizer's blocks, and the resource tracker unlinks them
when the parent alone is killed; when the whole process group is killed (SIGKILL to a job, an
OOM kill of the tree), nothing runs and the blocks would stay in /dev/shm until reboot.
`remove_orphaned_blocks` unlinks those, and every new `Multiprocessing` and every `puffer`
command calls it. Only the calling user's blocks are touched: /dev/shm is shared by every user,
and root may unlink anyone's files there.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

__all__ = ["SHM_DIR", "SHM_PREFIX", "block_prefix", "remove_orphaned_blocks"]

SHM_PREFIX = "puffer-vec"
# Where POSIX shared memory appears as files (Linux); elsewhere nothing is swept.
SHM_DIR = Path("/dev/shm")
_NAME = re.compile(rf"{SHM_PREFIX}-(\d+)-(\d+)-(\d+)-[0-9a-f]+-\w+")


def _identity(pid: int) -> tuple[int, int] | None:
    """(pid namespace inode, start time in ticks) of a running process; None if it is gone (or
    a zombie) or /proc cannot say."""
    try:
        namespace = os.stat(f"/proc/{pid}/ns/pid").st_ino
        with open(f"/proc/{pid}/stat") as file:
            # Fields after the parenthesized command name, which may hold spaces: state is
            # field 3, starttime field 22.
            fields = file.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    if fields[0] == "Z":
        return None
    return namespace, int(fields[19])


def block_prefix() -> str:
    """A fresh name prefix for this process's next vectorizer (`<prefix>-<array>` per block)."""
    pid = os.getpid()
    namespace, start = _identity(pid) or (0, 0)  # 0: unknown owner, never swept
    return f"{SHM_PREFIX}-{pid}-{namespace}-{start}-{secrets.token_hex(4)}"


def remove_orphaned_blocks(directory: Path = SHM_DIR) -> list[str]:
    """Unlink the blocks whose owner is gone: no process with that pid, namespace and start.

    Blocks of owners in another pid namespace than this process's are left alone (their
    processes cannot be seen from here), as are blocks of unknown owners, other names, and
    files another user owns (the name says nothing of the user; the file's owner does).

    Returns:
        The names unlinked.
    """
    own_namespace = (_identity(os.getpid()) or (0, 0))[0]
    removed = []
    uid = os.getuid()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        match = _NAME.fullmatch(name)
        if match is None:
            continue
        pid, namespace, start = map(int, match.groups())
        if namespace == 0 or namespace != own_namespace or _identity(pid) == (namespace, start):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue  # gone already
        try:
            (directory / name).unlink()
        except OSError:
            continue  # another process swept it first, or it is another user's
        removed.append(name)
    return removed
