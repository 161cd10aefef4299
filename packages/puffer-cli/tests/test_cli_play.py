"""`puffer play`: the game played under Xvfb with real X key events from xdotool (breakout's
paddle follows the arrows; 2048's score grows; go takes a point as column then row)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import imageio.v3 as iio
import numpy as np
import pytest
from typer.testing import CliRunner

from puffer.cli.main import app
from puffer.view.play import HUD_HEIGHT

# `puffer play` under Xvfb, a minute on 2 cores: scheduled with the slow modules.
pytestmark = pytest.mark.slow

XDOTOOL = shutil.which("xdotool")
# Breakout's paddle spans these frame rows (csrc/breakout/breakout.h: its y is 310, height 8).
PADDLE_ROWS = slice(310, 318)
# Go's intersections are this many pixels apart (csrc/go/go.h GO_CELL_PIXELS).
GO_CELL_PIXELS = 40


def test_play_refuses_non_ocean_envs_and_no_display(monkeypatch) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["play", "bandit"])
    assert result.exit_code == 2 and "is not an Ocean C env" in result.output
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = runner.invoke(app, ["play", "breakout"])
    assert result.exit_code == 2 and "xvfb-run puffer play" in result.output


class _Session:
    """`puffer play` in a subprocess on display `display`, steered with xdotool."""

    def __init__(self, display: str, *args: str):
        self.env = {**os.environ, "DISPLAY": display, "PYGAME_HIDE_SUPPORT_PROMPT": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "puffer.cli", "play", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # Waits until the game's window is mapped (a cold start imports torch: slow),
            # then gives it the keyboard focus; there is no window manager to do it.
            pid = str(self.process.pid)
            window = self._xdotool("search", "--sync", "--onlyvisible", "--pid", pid)
            self._xdotool("windowfocus", "--sync", window.split()[0])
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Kill the game if it still runs (a failed test) and reap it."""
        if self.process.returncode is None:
            self.process.kill()
            self.process.communicate(timeout=60)

    def _xdotool(self, *args: str) -> str:
        assert XDOTOOL is not None
        done = subprocess.run(
            [XDOTOOL, *args], env=self.env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def hold(self, key: str, seconds: float) -> None:
        self._xdotool("keydown", key)
        time.sleep(seconds)
        self._xdotool("keyup", key)

    def tap(self, *keys: str) -> None:
        for key in keys:
            self._xdotool("key", key)
            time.sleep(0.3)  # one frame at least, so each press is its own step

    def quit(self) -> str:
        """Escape, as a player quits; returns what the command printed."""
        self._xdotool("key", "Escape")
        out, _ = self.process.communicate(timeout=120)
        assert self.process.returncode == 0, out
        return out


def test_play_breakout_under_xvfb_keys_move_the_paddle(x_display, tmp_path: Path) -> None:
    gif = tmp_path / "breakout.gif"
    game = _Session(x_display, "breakout", "--record", str(gif), "--fps", "30")
    try:
        time.sleep(1.0)  # idle: the paddle stays where it starts
        game.hold("Left", 1.5)
        game.hold("Right", 3.0)
        out = game.quit()
    finally:
        game.close()
    assert "played" in out and f"recording: {gif}" in out
    frames = iio.imread(gif)[:, HUD_HEIGHT:]  # the score line is drawn above the env's frame
    x = np.array([_paddle_x(frame) for frame in frames])
    start = x[0]
    left, right = int(np.argmin(x)), int(np.argmax(x))
    # Left first, then right, each a long way from where the paddle started (576 px court).
    assert x[left] < start - 150 and x[right] > start + 150 and left < right
    assert x[1] == start  # the first step, before any key: idle keeps the paddle still


def _paddle_x(frame: np.ndarray) -> float:
    band = frame[PADDLE_ROWS].astype(np.int32)
    background = band[:, :1]
    columns = np.flatnonzero((np.abs(band - background).sum(-1) > 60).any(0))
    assert columns.size, "no paddle in the frame"
    return float(columns.mean())


def test_play_2048_is_one_step_per_key_press_and_scores(x_display, tmp_path: Path) -> None:
    gif = tmp_path / "g2048.gif"
    game = _Session(x_display, "g2048", "--record", str(gif))
    try:
        game.tap("Up", "Left", "Down", "Right", "Up", "Left", "Down", "Right", "a", "Up")
        out = game.quit()
    finally:
        game.close()
    # Ten presses, nine of them mapped ("a" is not): nine steps, and merges scored.
    assert "played 9 steps" in out, out
    so_far = float(out.split("return so far ")[1].split()[0])
    assert so_far > 0
    assert iio.imread(gif).shape[0] == 10  # the first frame and one per step


def test_play_go_types_a_point_as_column_then_row(x_display, tmp_path: Path) -> None:
    gif = tmp_path / "go.gif"
    game = _Session(x_display, "go", "--record", str(gif))
    try:
        game.tap("c", "x", "d", "4")  # "c x" is no point: dropped; "d 4" plays d4
        out = game.quit()
    finally:
        game.close()
    assert "played 1 steps" in out, out
    first, last = iio.imread(gif)[:, HUD_HEIGHT:]
    # d4 is column 3, row 3 from the top left: its intersection now holds a stone.
    cell = GO_CELL_PIXELS
    y = x = cell + 3 * cell
    patch = np.s_[y - 4 : y + 5, x - 4 : x + 5]
    assert not np.array_equal(first[patch], last[patch]), "no stone was placed at d4"
