"""Where frames go: a GIF (and its copies) written on close, a checked suffix, a scaled window,
and frames that are no RGB image refused with the env's name."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pygame
import pytest

from puffer.core import APIUsageError
from puffer.view import VideoWriter, Window, check_frame


def test_video_suffix_is_checked(tmp_path) -> None:
    with pytest.raises(APIUsageError, match=r"unsupported suffix '\.avi'; use \.gif or \.mp4"):
        VideoWriter(tmp_path / "out.avi")


def test_a_gif_and_its_copies_hold_every_frame(tmp_path) -> None:
    copy = tmp_path / "run" / "eval.gif"
    writer = VideoWriter(tmp_path / "out.gif", fps=10, copies=(copy, tmp_path / "out.gif"))
    assert writer.copies == (copy,)  # the file itself is not written twice
    frame = np.zeros((6, 8, 3), np.uint8)
    for value in (0, 128, 255):
        frame[:] = value  # the env reuses its render buffer: the writer keeps copies
        assert writer.add(frame)
    writer.close()
    for path in (writer.path, copy):
        frames = iio.imread(path)
        assert frames.shape == (3, 6, 8, 3)
        assert [int(f.mean()) for f in frames] == [0, 128, 255]


def test_nothing_is_written_without_frames(tmp_path) -> None:
    VideoWriter(tmp_path / "out.gif").close()
    assert not (tmp_path / "out.gif").exists()


def test_check_frame_names_the_env_and_what_it_gave() -> None:
    frame = np.zeros((4, 4, 3), np.uint8)
    assert check_frame(frame, "squared") is frame
    with pytest.raises(APIUsageError, match=r"squared.render\(\) returned str"):
        check_frame("text", "squared")
    with pytest.raises(APIUsageError, match=r"returned shape \(4, 4\) dtype uint8"):
        check_frame(np.zeros((4, 4), np.uint8), "squared")


def test_window_shows_frames_scaled(monkeypatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    frame = np.zeros((10, 12, 3), np.uint8)
    frame[2:4, 3:5] = (255, 0, 0)
    window = Window("test", fps=1000, scale=2)
    try:
        assert window.add(frame)
        shown = pygame.surfarray.array3d(window.screen).transpose(1, 0, 2)
        assert shown.shape == (20, 24, 3)
        assert (shown[4:8, 6:10] == (255, 0, 0)).all() and shown[0, 0].sum() == 0
    finally:
        window.close()
