"""The dashboard as files: served from 127.0.0.1 while runs go on, or exported to a folder.

    index.html, dashboard.js, dashboard.css   the page (package data in puffer/cli/static/)
    plotly.min.js                             the plotting library, from the plotly package
    data.js                                   `pufferData({...})`: experiments.collect() now
    files/<run>/eval.gif                      each run's eval video

Both ways serve the same bytes for the same data dir, so an export opens from disk showing what
the server showed. Nothing is fetched from the network: plotly.js ships inside the plotly wheel.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from functools import cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from puffer.cli.experiments import collect
from puffer.core import APIUsageError
from puffer.train.paths import RunPaths

__all__ = ["HOST", "DashboardServer", "data_script", "export", "page_files"]

# Only this machine may connect: the page shows local paths and configs.
HOST = "127.0.0.1"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".gif": "image/gif",
}


@cache
def page_files() -> dict[str, bytes]:
    """The page's fixed files by name: index.html, dashboard.js, dashboard.css, plotly.min.js."""
    from plotly.offline import get_plotlyjs

    static = files("puffer.cli") / "static"
    return {
        "index.html": (static / "dashboard.html").read_bytes(),
        "dashboard.js": (static / "dashboard.js").read_bytes(),
        "dashboard.css": (static / "dashboard.css").read_bytes(),
        "plotly.min.js": get_plotlyjs().encode(),
    }


def data_script(data: dict[str, Any], refresh: float) -> bytes:
    """data.js: the collected data handed to the page, and how often to reload it (0: never)."""
    payload = {**data, "refresh": refresh, "generated": time.time()}
    return f"pufferData({json.dumps(payload, allow_nan=False)});\n".encode()


def export(data_dir: str | Path, out: str | Path) -> Path:
    """Write a static copy of the dashboard of `data_dir` into folder `out` (created).

    Open `out/index.html` from disk: it reads data.js beside it and never reloads it.

    Returns:
        The path of index.html.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, content in page_files().items():
        (out / name).write_bytes(content)
    data = collect(data_dir)
    (out / "data.js").write_bytes(data_script(data, refresh=0))
    for run in data["runs"]:
        if run["video"] is not None:
            target = out / "files" / run["video"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(data_dir) / run["video"], target)
    return out / "index.html"


class DashboardServer:
    """An HTTP server on 127.0.0.1 that serves the dashboard of `data_dir`, read afresh on
    every load of data.js.

    Args:
        data_dir: The runs' root (`train.data_dir`).
        port: TCP port; 0 picks a free one (see `url`).
        refresh: Seconds between the page's reloads of the data.

    Raises:
        APIUsageError: The port is taken.
    """

    def __init__(self, data_dir: str | Path, port: int = 0, refresh: float = 5.0):
        self.data_dir = Path(data_dir)
        self.refresh = refresh
        handler = type("_Handler", (_Handler,), {"dashboard": self})
        try:
            self.httpd = ThreadingHTTPServer((HOST, port), handler)
        except OSError as error:
            raise APIUsageError(
                f"dashboard: cannot listen on {HOST}:{port} ({error.strerror}); pass another "
                "--port, or 0 for any free one"
            ) from error
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>/`."""
        return f"http://{HOST}:{self.httpd.server_address[1]}/"

    def serve_forever(self) -> None:
        """Serve in this thread until `close()` or Ctrl-C."""
        self.httpd.serve_forever()

    def start(self) -> DashboardServer:
        """Serve from a daemon thread; returns self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join()
            self._thread = None
        self.httpd.server_close()

    def content(self, path: str) -> bytes | None:
        """The bytes served at URL path `path`, or None for a path that is not served."""
        name = path.lstrip("/") or "index.html"
        if name == "data.js":
            return data_script(collect(self.data_dir), self.refresh)
        if name in page_files():
            return page_files()[name]
        if name.startswith("files/") and name.endswith("/" + RunPaths.VIDEO):
            # Only eval videos, and only inside the data dir: no `..` escapes it.
            root = self.data_dir.resolve()
            target = (root / name.removeprefix("files/")).resolve()
            if target.is_relative_to(root) and target.is_file():
                return target.read_bytes()
        return None


class _Handler(BaseHTTPRequestHandler):
    dashboard: DashboardServer

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        body = self.dashboard.content(path)
        if body is None:
            self.send_error(HTTPStatus.NOT_FOUND, f"{path} is not part of the dashboard")
            return
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", _TYPES.get(Path(path).suffix, _TYPES[".html"]))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL, not one line per request."""
