"""The dashboard as files: served from 127.0.0.1 while runs go on, or exported to a folder.

    index.html, dashboard.js, dashboard.css   the page (package data in puffer/view/static/)
    plotly.min.js                             the plotting library, from the plotly package
    data.js                                   `pufferData({...})`: experiments.collect() now
                                              (metrics read incrementally: puffer.view.tail)
    files/<run>/eval.gif                      each run's eval video

Both ways serve the same bytes for the same data dir, so an export opens from disk showing what
the server showed. Nothing is fetched from the network: plotly.js ships inside the plotly wheel.

The server answers GET only, and only requests that could come from the page itself:
  - the `Host` header must name the bound address and port (127.0.0.1:<port>, or
    localhost:<port>), else 403 — a site whose DNS name is rebound to 127.0.0.1 cannot read
    the page's data from a browser;
  - a request target with bytes outside printable ASCII, a path that does not decode as UTF-8,
    one that decodes to a control character, or an HTTP/0.9 request is answered 400;
  - every error is a fixed status line and body: nothing of the request is ever written into a
    status line or a header (`http.server`'s `send_error` put the decoded path there);
  - files are read through `puffer.view.inside` (inside the data dir, no symlink followed).
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import threading
import time
from functools import cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from puffer.core import APIUsageError
from puffer.train.paths import RunPaths
from puffer.view.experiments import collect
from puffer.view.inside import read_inside
from puffer.view.tail import MetricsTail

__all__ = ["HOST", "DashboardServer", "data_script", "export", "page_files"]

# Only this machine may connect: the page shows local paths and configs.
HOST = "127.0.0.1"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".gif": "image/gif",
}
# Sent with every answer: no type sniffing, no framing by other sites, no referrer leaving.
_HARDENING = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# The fetch-metadata labels of a request the page (or the user's own address bar) made.
_OWN_SITE = frozenset({"same-origin", "none"})
# A request target of printable ASCII only (RFC 9112): anything else is a bad request.
_PRINTABLE = re.compile(r"[\x21-\x7e]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Seconds a connection may stay silent before the server drops it.
_SOCKET_TIMEOUT = 10.0


@cache
def page_files() -> dict[str, bytes]:
    """The page's fixed files by name: index.html, dashboard.js, dashboard.css, plotly.min.js."""
    from plotly.offline import get_plotlyjs

    static = files("puffer.view") / "static"
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

    Open `out/index.html` from disk: it reads data.js beside it and never reloads it. Eval
    videos are copied as the server would serve them: from inside `data_dir`, through no
    symlink; a run listed with an error is written with its error.

    Returns:
        The path of index.html.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, content in page_files().items():
        (out / name).write_bytes(content)
    data = collect(data_dir)
    for run in data["runs"]:
        video = None if run["video"] is None else read_inside(Path(data_dir), run["video"])
        if video is None:
            run["video"] = None  # gone, or swapped for a symlink, since it was listed
            continue
        target = out / "files" / run["video"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(video)
    (out / "data.js").write_bytes(data_script(data, refresh=0))
    return out / "index.html"


class DashboardServer:
    """An HTTP server on 127.0.0.1 that serves the dashboard of `data_dir` under `url`, read
    again on every load of data.js (the metrics files as far as they grew since the last).

    Args:
        data_dir: The runs' root (`train.data_dir`).
        port: TCP port; 0 picks a free one (see `url`).
        refresh: Seconds between the page's reloads of the data.

    Attributes:
        hosts: The `Host` header values answered (the bound address and port, and
            `localhost:<port>`); any other is refused with 403.
        token: The random first path segment everything is served under.
        tail: What the server read of each metrics file (`MetricsTail`).

    Raises:
        APIUsageError: The port is taken.
    """

    def __init__(self, data_dir: str | Path, port: int = 0, refresh: float = 5.0):
        self.data_dir = Path(data_dir)
        self.refresh = refresh
        self.token = secrets.token_urlsafe(18)
        self.tail = MetricsTail()
        handler = type("_Handler", (_Handler,), {"dashboard": self})
        try:
            self.httpd = ThreadingHTTPServer((HOST, port), handler)
        except OSError as error:
            raise APIUsageError(
                f"dashboard: cannot listen on {HOST}:{port} ({error.strerror}); pass another "
                "--port, or 0 for any free one"
            ) from error
        bound = self.httpd.server_address[1]
        self.hosts = frozenset({f"{HOST}:{bound}", f"localhost:{bound}"})
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>/<token>/`: the page."""
        return f"http://{HOST}:{self.httpd.server_address[1]}/{self.token}/"

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
        """The bytes of page path `path` (decoded, the part after `/<token>`), or None for a
        path not served."""
        name = path.removeprefix("/") or "index.html"
        if name == "data.js":
            return data_script(collect(self.data_dir, self.tail), self.refresh)
        if name in page_files():
            return page_files()[name]
        if name.startswith("files/") and name.endswith("/" + RunPaths.VIDEO):
            return read_inside(self.data_dir, name.removeprefix("files/"))
        return None


class _Handler(BaseHTTPRequestHandler):
    dashboard: DashboardServer
    timeout = _SOCKET_TIMEOUT

    def do_GET(self) -> None:
        if self.request_version == "HTTP/0.9":  # no headers in the answer: not for a browser
            self.send_error(HTTPStatus.BAD_REQUEST)
            return
        hosts = self.headers.get_all("Host") or []
        if len(hosts) != 1 or hosts[0].lower() not in self.dashboard.hosts:
            self.send_error(HTTPStatus.FORBIDDEN)
            return
        sites = self.headers.get_all("Sec-Fetch-Site") or []
        if len(sites) > 1 or (sites and sites[0].strip().lower() not in _OWN_SITE):
            self.send_error(HTTPStatus.FORBIDDEN)
            return
        path = _decoded_path(self.path)
        if path is None:
            self.send_error(HTTPStatus.BAD_REQUEST)
            return
        head, slash, rest = path.removeprefix("/").partition("/")
        # compare_digest: how long a wrong token takes to refuse tells nothing of the right one.
        if not slash or not secrets.compare_digest(head.encode(), self.dashboard.token.encode()):
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        path = "/" + rest
        try:
            body = self.dashboard.content(path)
        except Exception as error:  # a bug: answer, say so in one line, keep serving
            print(f"dashboard: error serving {path!r}: {error!r}", file=sys.stderr)
            self.send_error(HTTPStatus.INTERNAL_SERVER_ERROR)
            return
        if body is None:
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        self._reply(HTTPStatus.OK, body, _TYPES.get(Path(path).suffix, _TYPES[".html"]))

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Every error, http.server's own (bad request lines, 501 for other methods) included:
        a fixed status line and body, never the `message` built from the request."""
        status = HTTPStatus(code)
        self.close_connection = True
        self._reply(status, f"{status.value} {status.phrase}\n".encode(), "text/plain")

    def _reply(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in _HARDENING.items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle(self) -> None:
        try:
            super().handle()
        except (ConnectionError, TimeoutError):
            pass  # the client went away mid-request: nothing to answer

    def finish(self) -> None:
        try:
            super().finish()
        except (ConnectionError, TimeoutError):
            pass

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the URL, not one line per request."""


def _decoded_path(target: str) -> str | None:
    """The URL path of a request target, percent-decoded; None when it is malformed: bytes
    outside printable ASCII, invalid UTF-8 escapes, or control characters once decoded."""
    if not _PRINTABLE.fullmatch(target):
        return None
    try:
        path = unquote(urlsplit(target).path, errors="strict")
    except (UnicodeDecodeError, ValueError):
        return None
    return None if _CONTROL.search(path) else path
