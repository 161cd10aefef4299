"""The exception hierarchy shared by every puffer package.

Every message names the object, the expected and the actual value, and the fix.
"""

from __future__ import annotations

__all__ = [
    "APIUsageError",
    "EmulationError",
    "EnvNotFoundError",
    "MissingPackageError",
    "PufferError",
    "WorkerError",
]


class PufferError(Exception):
    """Base class of every error raised by puffer."""


class APIUsageError(PufferError):
    """A call made out of order, on a closed object, or with arguments of the wrong shape/dtype."""


class EmulationError(PufferError):
    """An env or space that cannot be emulated, or an env that broke its own declared spaces."""


class WorkerError(PufferError):
    """A vectorizer worker raised or died. Carries the worker index and the remote traceback."""

    def __init__(self, message: str, worker: int | None = None, remote_traceback: str = ""):
        super().__init__(message if not remote_traceback else f"{message}\n{remote_traceback}")
        self.worker = worker
        self.remote_traceback = remote_traceback


class EnvNotFoundError(PufferError, KeyError):
    """`make(name)` was given a name no installed package registers.

    Attributes:
        suggestions: the close names the message already offers (empty when none was close).
    """

    def __init__(self, message: str, suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.suggestions = suggestions

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class MissingPackageError(EnvNotFoundError):
    """A name of an env's shape whose package does not import; the message names the failed
    import and the install line (close names would only mislead)."""
