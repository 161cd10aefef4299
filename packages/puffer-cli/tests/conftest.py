"""Real software for the CLI's tests: headless Chromium driven over its DevTools protocol (the
dashboard) and a virtual X server (`puffer play`).

The browser is Debian's `chromium` (no browser download: .ci/run installs the package). The
protocol runs over `--remote-debugging-pipe`: Chromium reads JSON commands from fd 3 and writes
replies and events to fd 4, each message ended by a NUL byte, so no websocket client is needed.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
XVFB = shutil.which("Xvfb")
XDOTOOL = shutil.which("xdotool")


class Browser:
    """One headless Chromium with one page; `console_errors` collects what the page logged as
    errors (console.error, uncaught exceptions, failed loads).

    Args:
        width, height: The page's viewport in CSS pixels.
    """

    def __init__(self, width: int = 1280, height: int = 900):
        assert CHROMIUM is not None
        self.profile = tempfile.mkdtemp(prefix="puffer-chromium-")
        to_chrome, self._out = os.pipe()
        self._in, from_chrome = os.pipe()

        def child_fds() -> None:  # runs in the child before exec: fds 3 and 4 are the protocol
            os.dup2(to_chrome, 3)
            os.dup2(from_chrome, 4)

        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",  # CI runs as root, where the sandbox refuses to start
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            # Not close_fds: it would close fds 3 and 4 after child_fds made them. Python's own
            # fds are close-on-exec anyway; dup2's copies are not.
            close_fds=False,
            preexec_fn=child_fds,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome)
        os.close(from_chrome)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.console_errors: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self._open_page(width, height)
        except BaseException:
            self._stop()
            raise

    def _open_page(self, width: int, height: int) -> None:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                self._dispatch(json.loads(raw))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "id" in message:
            with self._lock:
                box = self._replies.get(message["id"])
            if box is not None:
                box.put(message)
            return
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.console_errors.append(
                " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.console_errors.append(
                details.get("exception", {}).get("description", details.get("text"))
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            self.console_errors.append(f"{entry['text']} {entry.get('url', '')}".strip())

    def call(self, method: str, session: bool = False, timeout: float = 60, **params: Any) -> Any:
        """Send one protocol command (to the page when `session`) and return its result."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
            box: queue.Queue = queue.Queue()
            self._replies[number] = box
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        reply = box.get(timeout=timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def goto(self, url: str) -> None:
        """Open `url` in the page (returns once it started loading; see `wait_for`)."""
        self.call("Page.navigate", session=True, url=url)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JS expression in the page (promises awaited)."""
        result = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60) -> Any:
        """Poll a JS expression until it is truthy; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(f"(() => {{ try {{ return {expression}; }} catch (e) {{ }} }})()")
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"page never satisfied {expression!r} in {timeout}s")
            time.sleep(0.2)

    def screenshot(self) -> bytes:
        """A PNG of the whole page, beyond the viewport."""
        width, height = self.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
        )
        result = self.call(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        return base64.b64decode(result["data"])

    def close(self) -> None:
        """Quit the browser and remove its profile."""
        try:
            self.call("Browser.close", timeout=10)
        except (RuntimeError, queue.Empty, OSError):
            self.process.kill()
        self._stop()

    def _stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=10)  # it ends at the EOF the browser's exit gives
        os.close(self._out)
        os.close(self._in)
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser():
    """A headless Chromium page; skips where Debian's chromium is not installed."""
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH: `apt-get install chromium` (.ci/run installs it)")
    page = Browser()
    yield page
    page.close()


@pytest.fixture
def x_display():
    """A virtual X server's DISPLAY (":N"); skips where Xvfb or xdotool is not installed."""
    if XVFB is None or XDOTOOL is None:
        pytest.skip("no Xvfb/xdotool on PATH: `apt-get install xvfb xdotool` (.ci/run does)")
    read, write = os.pipe()
    # -displayfd: the server picks a free display number and writes it to that fd when ready.
    server = subprocess.Popen(
        [XVFB, "-displayfd", str(write), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    number = b""
    while not number.endswith(b"\n"):
        chunk = os.read(read, 16)
        if not chunk:
            break
        number += chunk
    os.close(read)
    assert number.strip(), "Xvfb exited before it named its display"
    yield f":{number.decode().strip()}"
    server.terminate()
    server.wait(timeout=30)
