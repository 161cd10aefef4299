"""Where rendered frames go (`puffer eval`, `puffer play --record`): a GIF/MP4 file (imageio)
or a pygame window.

Frames are RGB uint8 arrays of shape (H, W, 3), as `PufferEnv.render()` returns them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Protocol

import numpy as np

from puffer.core import APIUsageError
from puffer.train.storage import atomic_write, writing

__all__ = ["FrameSink", "VideoWriter", "Window", "check_frame", "has_display"]


class FrameSink(Protocol):
    """Receives frames one at a time."""

    def add(self, frame: np.ndarray) -> bool:
        """Take one (H, W, 3) uint8 frame; return False when the viewer asked to stop."""
        ...

    def close(self) -> None:
        """Finish the video or close the window."""
        ...


def has_display() -> bool:
    """Whether a window can open: always on macOS/Windows, with X11 or Wayland on Linux."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def check_frame(frame: object, env_name: str) -> np.ndarray:
    """Return `frame` as an (H, W, 3) uint8 array, or raise naming the env and what it gave.

    Raises:
        APIUsageError: The env's `render()` returned something else (text, wrong shape).
    """
    array = np.asarray(frame) if isinstance(frame, np.ndarray) else None
    if array is None or array.dtype != np.uint8 or array.ndim != 3 or array.shape[2] != 3:
        shown = (
            f"shape {array.shape} dtype {array.dtype}"
            if array is not None
            else type(frame).__name__
        )
        raise APIUsageError(
            f"{env_name}.render() returned {shown}; eval needs an RGB uint8 frame of shape "
            "(H, W, 3) (create the env with render_mode='rgb_array')"
        )
    return array


class VideoWriter:
    """Collects frames and writes them as a GIF (Pillow) or MP4 (ffmpeg) on `close()`, each
    file atomically (`puffer.train.storage.atomic_write`).

    Args:
        path: Output file; the suffix picks the format (.gif, .mp4).
        fps: Frames per second of the video.
        copies: More files to write the same frames to (each in its own suffix's format),
            e.g. the run directory's `eval.gif` that the dashboard shows.

    Raises:
        APIUsageError: An unsupported suffix, or .mp4 without imageio-ffmpeg installed.
    """

    def __init__(self, path: str | Path, fps: int = 30, copies: tuple[Path, ...] = ()):
        self.path = Path(path)
        self.fps = fps
        self.copies = tuple(copy for copy in copies if copy.resolve() != self.path.resolve())
        suffix = self.path.suffix.lower()
        if suffix not in (".gif", ".mp4"):
            raise APIUsageError(
                f"--video {self.path}: unsupported suffix {suffix!r}; use .gif or .mp4"
            )
        if suffix == ".mp4":
            try:
                import imageio_ffmpeg  # noqa: F401  (only checks that ffmpeg is available)
            except ImportError as error:
                raise APIUsageError(
                    f"--video {self.path}: writing MP4 needs ffmpeg; "
                    "install imageio-ffmpeg (puffer-view's [mp4] extra) or write a .gif"
                ) from error
        self.frames: list[np.ndarray] = []

    def add(self, frame: np.ndarray) -> bool:
        """Keep one frame (a copy: envs reuse their render buffer)."""
        self.frames.append(np.array(frame, dtype=np.uint8, copy=True))
        return True

    def close(self) -> None:
        """Encode and write the file; writes nothing when no frame was added."""
        if not self.frames:
            return
        import imageio.v2 as imageio

        encoded: dict[str, bytes] = {}
        for path in (self.path, *self.copies):
            suffix = path.suffix.lower()
            if suffix not in encoded:
                if suffix == ".gif":
                    # Pillow takes the frame duration in milliseconds; loop=0 repeats forever.
                    options = {"duration": 1000 / self.fps, "loop": 0}
                else:
                    # macro_block_size=1 keeps odd frame sizes instead of resizing them.
                    options = {"fps": self.fps, "macro_block_size": 1}
                encoded[suffix] = imageio.mimwrite("<bytes>", self.frames, format=suffix, **options)
            with writing(path):
                path.parent.mkdir(parents=True, exist_ok=True)
            # Renamed over the old file: a full disk leaves the old video whole, and a symlink
            # planted under the name is replaced, not written through.
            atomic_write(path, lambda file, data=encoded[suffix]: file.write(data))


class Window:
    """A pygame window that shows frames at `fps`, scaled up by an integer factor.

    Args:
        title: Window caption.
        fps: Frames per second; the window waits between frames to keep it.
        scale: Integer upscaling of each frame (small C-env frames are tiny on screen).
    """

    def __init__(self, title: str, fps: int = 30, scale: int = 4):
        import pygame

        self._pygame = pygame
        pygame.display.init()  # display only: pygame.init() would also open audio devices
        pygame.display.set_caption(title)
        self.fps = fps
        self.scale = scale
        self.clock = pygame.time.Clock()
        self.screen = None

    def add(self, frame: np.ndarray) -> bool:
        """Show one frame; False once the user closed the window or pressed Escape or q."""
        pygame = self._pygame
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                return False
            if event.type == pygame.KEYDOWN and event.key in (pygame.K_ESCAPE, pygame.K_q):
                return False
        height, width, _ = frame.shape
        size = (width * self.scale, height * self.scale)
        if self.screen is None or self.screen.get_size() != size:
            self.screen = pygame.display.set_mode(size)
        # pygame surfaces are indexed (x, y): transpose the (H, W, 3) frame.
        surface = pygame.surfarray.make_surface(np.ascontiguousarray(frame.transpose(1, 0, 2)))
        self.screen.blit(pygame.transform.scale(surface, size), (0, 0))
        pygame.display.flip()
        self.clock.tick(self.fps)
        return True

    def close(self) -> None:
        """Close the window."""
        self._pygame.quit()
