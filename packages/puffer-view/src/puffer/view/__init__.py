"""puffer.view: what a person looks at besides the terminal.

The browser dashboard of a data dir (`collect` reads the runs and sweeps, `DashboardServer`
serves them on 127.0.0.1, `export` writes them as files), where rendered frames go
(`VideoWriter` for GIF/MP4, `Window` on screen), and keyboard play of the Ocean envs (`KeyMap`,
`PlayWindow`, and the other agents as `RandomOthers` or `PolicyOthers`). The `puffer eval`,
`puffer dashboard` and `puffer play` commands are thin shells over these.
"""

from __future__ import annotations

from puffer.view.experiments import collect
from puffer.view.play import KeyMap, Others, PlayWindow, PolicyOthers, RandomOthers, Score
from puffer.view.site import DashboardServer, export
from puffer.view.video import FrameSink, VideoWriter, Window, check_frame, has_display

__version__ = "0.1.0"

__all__ = [
    "DashboardServer",
    "FrameSink",
    "KeyMap",
    "Others",
    "PlayWindow",
    "PolicyOthers",
    "RandomOthers",
    "Score",
    "VideoWriter",
    "Window",
    "check_frame",
    "collect",
    "export",
    "has_display",
]
