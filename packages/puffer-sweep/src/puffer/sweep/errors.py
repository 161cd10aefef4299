"""Errors raised by puffer.sweep.

puffer-sweep imports no other puffer package (it knows nothing of RL), so it keeps its own small
hierarchy. Every message names the object, the expected and the actual value, and the fix.
"""

from __future__ import annotations

__all__ = ["SweepConfigError", "SweepError", "SweepHalted", "SweepStoreError"]


class SweepError(Exception):
    """Base class of every error raised by puffer.sweep."""


class SweepConfigError(SweepError, ValueError):
    """A `[sweep]` section, parameter spec or method option that cannot be used."""


class SweepStoreError(SweepError):
    """A sweep store on disk that does not belong to this sweep or cannot be read."""


class SweepHalted(SweepError):
    """Raised by an objective for a run that failed for a reason that is no fault of its params
    (the disk filled up): the sweep stops without recording it, so a resume runs it again
    instead of counting it as a failed run."""
