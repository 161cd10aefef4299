"""Frame helpers: RGB frames as terminal text, and as PNG files without an imaging library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

from puffer.core import APIUsageError

__all__ = ["frame_to_ansi", "write_png"]


def _check_frame(frame: np.ndarray) -> None:
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise APIUsageError(
            f"frame has shape {frame.shape} dtype {frame.dtype}, expected (H, W, 3) uint8"
        )


def frame_to_ansi(frame: np.ndarray, max_columns: int = 80) -> str:
    """Render an RGB frame as terminal text with 24-bit colour escapes.

    Each character is an upper half block whose foreground is one pixel row and background the
    next, after nearest-neighbour downscaling to at most `max_columns` columns.

    Args:
        frame: (H, W, 3) uint8.
        max_columns: width of the text in characters.

    Returns:
        Lines joined by newlines, each ending with a colour reset.
    """
    _check_frame(frame)
    width = frame.shape[1]
    step = max(1, -(-width // max_columns))
    small = frame[::step, ::step]
    if len(small) % 2:
        small = np.concatenate([small, np.zeros_like(small[:1])])
    lines = []
    for top, bottom in zip(small[0::2], small[1::2], strict=True):
        cells = (
            f"\x1b[38;2;{t[0]};{t[1]};{t[2]}m\x1b[48;2;{b[0]};{b[1]};{b[2]}m\u2580"
            for t, b in zip(top.tolist(), bottom.tolist(), strict=True)
        )
        lines.append("".join(cells) + "\x1b[0m")
    return "\n".join(lines)


def write_png(frame: np.ndarray, path: str | Path) -> Path:
    """Write an RGB frame to `path` as an 8-bit PNG (zlib from the standard library).

    Args:
        frame: (H, W, 3) uint8.
        path: destination file; overwritten.

    Returns:
        The path written.
    """
    _check_frame(frame)
    height, width, _ = frame.shape
    # Each scanline starts with filter type 0 (none).
    raw = np.concatenate(
        [np.zeros((height, 1), np.uint8), np.ascontiguousarray(frame).reshape(height, -1)],
        axis=1,
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + chunk(b"IEND", b"")
    )
    path = Path(path)
    path.write_bytes(png)
    return path
