"""Rendered frames show the game: breakout and snake frames are saved as PNG and checked."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np

import puffer.ocean
from puffer.ocean import frame_to_ansi, write_png

# Colors of csrc/raster.h, as drawn by the env headers.
WHITE, MAGENTA, GREEN, BACKGROUND = (255, 255, 255), (187, 0, 187), (0, 187, 0), (6, 24, 24)
GRAY = (128, 128, 128)
BRICK_ROWS = [(187, 0, 0), (230, 120, 0), (230, 200, 0), (0, 187, 0), (0, 187, 187), (0, 120, 220)]


def read_png(path: Path) -> np.ndarray:
    """Decode the 8-bit RGB, filter-0 PNGs that `write_png` writes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, size = 8, b"", None
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        offset += 12 + length
    width, height = size
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + 3 * width)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, 3)


def pixels(frame: np.ndarray, color: tuple[int, int, int]) -> int:
    return int((frame == np.array(color, np.uint8)).all(axis=2).sum())


def test_ocean_breakout_frame_shows_bricks_paddle_ball(tmp_path: Path) -> None:
    env = puffer.ocean.Breakout(num_envs=1)
    env.reset(seed=0)
    frame = env.render()
    path = write_png(frame, tmp_path / "breakout.png")
    frame = read_png(path)
    assert frame.shape == (330, 576, 3)
    brick_area = 30 * 10  # a brick is drawn 30x10 inside its 32x12 cell
    for color in BRICK_ROWS:
        assert pixels(frame, color) == 18 * brick_area, color
    assert pixels(frame, MAGENTA) >= 62 * 8  # the paddle (plus the lives counter)
    assert pixels(frame, WHITE) >= 36  # the ball (plus the score digits)
    # Follow the ball until bricks break (their observation reads 1): fewer brick pixels.
    for _ in range(2000):
        obs = env.observations[0]
        offset = obs[2] * 576 + 16 - (obs[0] * 576 + obs[9] * 31)  # ball centre - paddle's
        env.step(np.array([2 if offset > 4 else (1 if offset < -4 else 0)], np.int32))
        if obs[10:].sum() > 4:
            break
    after = env.render()
    write_png(after, tmp_path / "breakout_later.png")
    assert sum(pixels(after, c) for c in BRICK_ROWS) < 108 * brick_area
    env.close()


def test_ocean_snake_frame_shows_snakes_and_food(tmp_path: Path) -> None:
    env = puffer.ocean.Snake(num_envs=1, width=32, height=24, num_snakes=4, num_food=20)
    env.reset(seed=1)
    frame = read_png(write_png(env.render(), tmp_path / "snake.png"))
    assert frame.shape == (24 * 2, 32 * 2, 3)  # 2x2 pixels a cell
    assert pixels(frame, GREEN) == 20 * 4  # the food
    assert pixels(frame, WHITE) == 4 * 4  # the heads (length 1: the whole snake)
    assert pixels(frame, GRAY) == (32 * 24 - 22 * 14) * 4  # the 5-cell walls
    assert pixels(frame, BACKGROUND) == 22 * 14 * 4 - 24 * 4
    env.close()


def test_ocean_ansi_render_is_colored_text() -> None:
    env = puffer.ocean.Pong(num_envs=1, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "\x1b[38;2;" in text
    lines = text.splitlines()
    # The 620-pixel-wide frame is sampled every 8th pixel to fit 80 columns, 2 rows a line.
    assert len(lines) == 640 // 8 // 2 and "\u2580" in lines[0]
    assert frame_to_ansi(np.zeros((4, 4, 3), np.uint8)).count("\n") == 1
    env.close()


def test_ocean_readme_example_runs() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["frame"].shape == (330, 576, 3)
