"""`puffer dashboard` against hostile links, hostile pages and hostile files: the real server in
a subprocess, raw requests over TCP, cross-site requests as a browser labels them, a data dir
that holds symlinks out of it and runs no trainer wrote, and a fuzz of 10,000 random requests.
The server's stderr must stay free of tracebacks."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path

import pytest

_SCRIPT = shutil.which("puffer", path=str(Path(sys.executable).parent))
PUFFER = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "puffer.cli"]

SECRET = "s3cr3t-token-outside-the-data-dir"
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
ROW = {"step": 256, "environment/episode_return": 9.5, "performance/sps": 1000.0}
# The headers the server may send; anything else in an answer was injected.
ALLOWED_HEADERS = {
    "server", "date", "content-type", "content-length", "x-content-type-options",
    "x-frame-options", "referrer-policy", "cache-control", "connection",
    "cross-origin-resource-policy",
}  # fmt: skip
# The body of every error answer: its status and nothing else.
FIXED_BODIES = {f"{s.value} {s.phrase}\n".encode() for s in HTTPStatus if s >= 400}


def _rows(*rows: object) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def _hostile_data(root: Path, outside: Path) -> Path:
    """A data dir of good runs, runs no trainer wrote, and symlinks leading out of it."""
    data = root / "experiments"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps({"auth": {"token": SECRET}}))
    (outside / "run").mkdir()
    (outside / "run" / "metrics.jsonl").write_bytes(_rows({"step": 1, "leak": SECRET}))
    files: dict[str, bytes | Path] = {
        "good/metrics.jsonl": _rows(ROW, {**ROW, "step": 512}),
        "good/config.json": json.dumps({"train": {"gamma": 0.9}}).encode(),
        "good/eval.gif": GIF,
        "linked-gif/metrics.jsonl": _rows(ROW),
        "linked-gif/eval.gif": Path("/etc/passwd"),
        "linked-config/metrics.jsonl": _rows(ROW),
        "linked-config/config.json": outside / "secret.json",
        "bad-config/config.json": b"{not json",
        "nan-config/config.json": b'{"train": {"gamma": NaN}}',
        "latin1-config/config.json": b'{"train": {"name": "caf\xe9"}}',
        "list-row/metrics.jsonl": b"[1, 2]\n" + _rows(ROW),
        "huge-step/metrics.jsonl": b'{"step": 1e400}\n' + _rows(ROW),
        "bytes-row/metrics.jsonl": b"\xff\xfe\x00\n" + _rows(ROW),
        "sweep-broken/sweep.jsonl": b"\xff not a store\n",
    }
    for name, content in files.items():
        path = data / "cartpole" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            path.symlink_to(content)
        else:
            path.write_bytes(content)
    (data / "cartpole" / "linked-run").symlink_to(outside / "run")
    return data


@dataclass
class Server:
    data: Path
    port: int
    token: str
    log: Path

    def request(self, raw: bytes) -> bytes:
        """Send `raw` as is, return every byte of the answer (the server closes)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as conn:
            conn.sendall(raw)
            conn.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := conn.recv(1 << 16):
                chunks.append(chunk)
        return b"".join(chunks)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def get(
        self, target: str, host: str | None = "", headers: str = "", token: bool = True
    ) -> tuple[int, dict[str, str], bytes]:
        """GET `target` under the server's token (`token=False`: as given)."""
        host = f"127.0.0.1:{self.port}" if host == "" else host
        target = f"/{self.token}{target}" if token else target
        head = f"GET {target} HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host else "") + headers
        return _parse(self.request(head.encode("latin-1") + b"Connection: close\r\n\r\n"))


def _parse(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    match = re.fullmatch(r"HTTP/1\.[01] (\d{3}) ([A-Za-z -]+)", status)
    assert match, f"bad status line {status!r}"
    code = int(match.group(1))
    assert match.group(2) == HTTPStatus(code).phrase, status  # never a phrase from the request
    headers = {}
    for line in lines:
        name, colon, value = line.partition(": ")
        assert colon and name.lower() in ALLOWED_HEADERS, f"unexpected header line {line!r}"
        headers[name.lower()] = value
    return code, headers, body


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("security")
    data = _hostile_data(root, root / "outside")
    log = root / "server.log"
    with log.open("wb") as stderr:
        child = subprocess.Popen(
            [*PUFFER, "dashboard", "--data-dir", str(data), "--port", "0"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, env={**os.environ, "COLUMNS": "300"},
        )  # fmt: skip
    try:
        line = child.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]{20,})/", line)
        assert match, line + log.read_text()
        yield Server(data, int(match.group(1)), match.group(2), log)
    finally:
        child.terminate()
        child.communicate(timeout=60)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception" not in text, text[-4000:]


def _data(server: Server) -> dict:
    code, headers, body = server.get("/data.js")
    assert code == 200 and headers["content-type"].startswith("text/javascript")
    text = body.decode()
    assert text.startswith("pufferData(") and text.endswith(");\n")
    return json.loads(text[len("pufferData(") : -3])


def test_an_injected_crlf_never_reaches_a_status_line_or_header(server: Server) -> None:
    target = "/x%0d%0aX-Injected:%20yes%0d%0a%0d%0a%3Cscript%3Ealert(1)%3C/script%3E"
    answer = server.request(
        f"GET /{server.token}{target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode()
    )
    code, _, body = _parse(answer)  # fails on any header it does not expect
    assert code == 400 and body == b"400 Bad Request\n"
    assert b"X-Injected" not in answer and b"<script>" not in answer
    # A plain 404 carries no part of the path either.
    code, _, body = server.get("/no-such-page-%3Cb%3E")
    assert code == 404 and body == b"404 Not Found\n"


@pytest.mark.parametrize(
    ("target", "code"),
    [
        ("/%00", 400),
        ("/a%0Ab", 400),
        ("/%FF", 400),
        ("/%C3%28", 400),
        ("/%E2%82%AC", 404),
        ("/files/cartpole/good/%2e%2e/%2e%2e/%2e%2e/etc/passwd", 404),
        ("/files/../../etc/passwd", 404),
        ("/files//etc/passwd", 404),
        ("/files/cartpole/linked-gif/eval.gif", 404),
        ("/files/cartpole/linked-run/eval.gif", 404),
        ("/index.html", 200),
        ("/files/cartpole/good/eval.gif", 200),
    ],
)
def test_bad_bytes_are_400_and_only_real_files_inside_are_served(
    server: Server, target: str, code: int
) -> None:
    got, headers, body = server.get(target)
    assert got == code, (target, body[:200])
    assert headers["x-content-type-options"] == "nosniff"
    if target.endswith("good/eval.gif"):
        assert body == GIF and headers["content-type"] == "image/gif"
    assert b"root:" not in body  # /etc/passwd


@pytest.mark.parametrize(
    "host",
    [None, "evil.example", "evil.example:{port}", "127.0.0.1", "127.0.0.1:1", "[::1]:{port}"],
)
def test_a_host_other_than_the_bound_address_is_refused(server: Server, host) -> None:
    # DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1.
    host = None if host is None else host.format(port=server.port)
    code, _, body = server.get("/data.js", host=host)
    assert code == 403 and body == b"403 Forbidden\n"
    two = f"Host: 127.0.0.1:{server.port}\r\nHost: evil.example\r\n"
    data_js = f"/{server.token}/data.js"
    code, _, _ = _parse(server.request(f"GET {data_js} HTTP/1.1\r\n{two}\r\n".encode()))
    assert code == 403
    assert server.get("/data.js", host=f"localhost:{server.port}")[0] == 200


def test_other_methods_get_a_fixed_answer(server: Server) -> None:
    for method in ("POST", "PUT", "DELETE", "X\x7fY"):
        raw = f"{method} / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode("latin-1")
        code, _, body = _parse(server.request(raw))
        assert code == 501 and body == b"501 Not Implemented\n"


def _check_hostile_runs(data: dict) -> None:
    runs = {run["id"].removeprefix("cartpole/"): run for run in data["runs"]}
    assert set(runs) == {
        "good",
        "linked-gif",
        "linked-config",
        "bad-config",
        "nan-config",
        "latin1-config",
        "list-row",
        "huge-step",
        "bytes-row",
    }  # fmt: skip (the symlinked run dir is not followed)
    assert runs["good"]["step"] == [256.0, 512.0] and runs["good"]["error"] is None
    assert runs["good"]["video"] == "cartpole/good/eval.gif"
    assert runs["good"]["diff"]["train.gamma"][0] == 0.9
    assert runs["linked-gif"]["video"] is None
    assert runs["linked-config"]["diff"] == {} and runs["linked-config"]["error"] is None
    for name, error in [
        ("bad-config", "JSONDecodeError"),
        ("nan-config", "ValueError: Out of range float values are not JSON compliant"),
        ("latin1-config", "UnicodeDecodeError"),
    ]:
        assert runs[name]["error"].startswith(error), runs[name]["error"]
        assert runs[name]["metrics"] == {}
    for name in ("list-row", "huge-step", "bytes-row"):
        assert runs[name]["skipped"] == 1 and runs[name]["step"] == [256.0], name
    (sweep,) = data["sweeps"]
    assert sweep["id"] == "cartpole/sweep-broken"
    assert sweep["error"].startswith("UnicodeDecodeError")


def test_each_run_is_read_alone_and_nothing_outside_leaks(server: Server) -> None:
    data = _data(server)
    _check_hostile_runs(data)
    assert SECRET not in json.dumps(data)


def test_the_page_shows_the_readable_runs_and_lists_the_others_with_their_error(
    server: Server, browser
) -> None:
    browser.goto(server.url)
    browser.wait_for("document.body.dataset.loaded")
    shown = browser.evaluate(
        "(() => ({ rows: [...document.querySelectorAll('#runs tbody tr')].map((r) => "
        "[r.dataset.run, r.classList.contains('broken'), r.innerText]), "
        "curves: [...document.querySelectorAll('#curves .plot.curves')]"
        ".flatMap((d) => d.data.map((t) => t.name)), "
        "sweep: document.querySelector('.sweep-point.error').innerText }))()"
    )
    broken = {run.removeprefix("cartpole/") for run, bad, _ in shown["rows"] if bad}
    assert broken == {"bad-config", "nan-config", "latin1-config"}
    assert all("unreadable: " in text for _, bad, text in shown["rows"] if bad)
    assert len(shown["rows"]) == 9 and "cartpole/good" in shown["curves"]
    skipped = [text for run, _, text in shown["rows"] if run == "cartpole/list-row"]
    assert "1 metrics lines that are no rows skipped" in skipped[0]
    assert shown["sweep"].startswith("store unreadable: UnicodeDecodeError")
    assert browser.console_errors == []


def test_export_copies_only_what_the_server_would_serve(
    server: Server, tmp_path: Path, puffer_in_process
) -> None:
    out = tmp_path / "export"
    # What is copied is the command's doing, not the process's: run in this one.
    done = puffer_in_process(
        "dashboard", "--data-dir", str(server.data), "--export", str(out), cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    text = (out / "data.js").read_text()
    _check_hostile_runs(json.loads(text[len("pufferData(") : -3]))
    copied = sorted(
        p.relative_to(out).as_posix() for p in (out / "files").rglob("*") if p.is_file()
    )
    assert copied == ["files/cartpole/good/eval.gif"]
    for path in out.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert SECRET.encode() not in content and b"root:x:0:0" not in content, path


@pytest.mark.parametrize(
    "target", ["/", "/index.html", "/data.js", "/files/cartpole/good/eval.gif"]
)
def test_nothing_is_served_without_the_token(server: Server, target: str) -> None:
    # A page elsewhere cannot see the terminal, so it cannot name the URL.
    assert server.get(target, token=False)[0] == 404
    wrong = "A" * len(server.token)
    assert server.get(f"/{wrong}{target}", token=False)[0] == 404
    assert server.get(f"/{server.token[:-1]}{target}", token=False)[0] == 404
    assert server.get(target)[0] == 200


@pytest.mark.parametrize(
    ("site", "code"),
    [
        ("same-origin", 200),
        ("none", 200),
        ("Same-Origin", 200),
        ("cross-site", 403),
        ("same-site", 403),
        ("Cross-Site", 403),
        ("", 403),
        ("same-origin, cross-site", 403),
    ],
)
def test_fetch_metadata_other_than_the_page_s_own_is_refused(
    server: Server, site: str, code: int
) -> None:
    # <script src=".../data.js"> on another site: the browser labels it cross-site.
    headers = f"Sec-Fetch-Site: {site}\r\nSec-Fetch-Dest: script\r\nOrigin: http://evil.example\r\n"
    got, answer_headers, body = server.get("/data.js", headers=headers)
    assert got == code, (site, body[:100])
    assert answer_headers["cross-origin-resource-policy"] == "same-origin"
    assert answer_headers["x-content-type-options"] == "nosniff"
    if code == 403:
        assert body == b"403 Forbidden\n" and b"pufferData" not in body
    two = "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n"
    assert server.get("/data.js", headers=two)[0] == 403


# The fuzz ------------------------------------------------------------------------------------

FUZZ_REQUESTS = 10_000
# What the page loads (less plotly.min.js: 3.5 MB a time, and a file like dashboard.js).
_PATHS = ["/", "/index.html", "/data.js", "/dashboard.js", "/files/cartpole/good/eval.gif",
          "/files/cartpole/linked-gif/eval.gif", "/nope"]  # fmt: skip
_NASTY = [b"\r\n", b"\r", b"\n", b"\x00", b"%0d%0a", b"%00", b"%ff", b"%e2%82", b"%2e%2e/",
          b"../", b"\xc3\xa9", b"\xff", b" ", b"\t", b"%", b"%%", b"?", b"#", b"X-Injected: 1",
          b"<script>", "€".encode()]  # fmt: skip


# Fetch metadata a browser sends (and some no browser would): only the first two are served.
_SITES = [b"same-origin", b"none", b"same-site", b"cross-site", b"Cross-Site", b"", b"\xff",
          b"same-origin, cross-site"]  # fmt: skip


def _fuzz_request(rng: random.Random, server: Server) -> bytes:
    """One random request: a mutated path, odd headers, fetch metadata, or bytes with no shape
    at all."""
    kind = rng.random()
    if kind < 0.05:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    page = rng.choice(_PATHS)
    path = bytearray((f"/{server.token}{page}" if rng.random() < 0.9 else page).encode())
    for _ in range(rng.randrange(4)):
        at = rng.randrange(len(path) + 1)
        piece = rng.choice(_NASTY) if rng.random() < 0.7 else b"%%%02x" % rng.randrange(256)
        path[at:at] = piece
    own = f"127.0.0.1:{server.port}".encode()
    host = own if rng.random() < 0.8 else rng.choice(_NASTY)
    method = rng.choice([b"GET"] * 8 + [b"POST", b"HEAD", b"G\x00T"])
    version = rng.choice([b"HTTP/1.1"] * 6 + [b"HTTP/1.0", b"HTTP/9.9", b"", b"HTTP/1.1\xff"])
    head = method + b" " + bytes(path) + (b" " + version if version else b"") + b"\r\n"
    head += b"Host: " + host + b"\r\n"
    for _ in range(rng.randrange(3)):
        head += rng.choice([b"Sec-Fetch-Site"] * 2 + [b"X-A", b"Cookie", b"Range", b"\xff"])
        head += b": " + rng.choice([*_SITES, *_NASTY]) + b"\r\n"
    if rng.random() < 0.2:
        head += b"Origin: " + rng.choice([b"http://evil.example", b"null", b"http://" + own])
        head += b"\r\n"
    return head + b"\r\n"


def _check_answer(answer: bytes) -> None:
    if not answer.startswith(b"HTTP/"):
        # An HTTP/0.9 request gets a bare body: it must be a fixed one (or nothing at all).
        assert answer == b"" or answer in FIXED_BODIES, answer[:200]
        return
    code, _, body = _parse(answer)
    if code != 200:
        assert body == f"{code} {HTTPStatus(code).phrase}\n".encode() or body == b"", body[:200]


def test_fuzz_leaves_no_traceback_and_no_injected_header(server: Server) -> None:
    rng = random.Random(45)
    counts: dict[str, int] = {}
    deadline = time.monotonic() + 240  # generous: on an idle machine it takes seconds
    for _ in range(FUZZ_REQUESTS):
        answer = server.request(_fuzz_request(rng, server))
        _check_answer(answer)
        key = answer[9:12].decode("latin-1") if answer.startswith(b"HTTP/") else "bare"
        counts[key] = counts.get(key, 0) + 1
        assert time.monotonic() < deadline, f"the server slowed to a crawl: {counts}"
    # The mix reached every kind of answer: served pages, and each refusal; no server error
    # (501 is the fixed answer to a method other than GET).
    assert {"200", "400", "403", "404"} <= set(counts), counts
    assert [code for code in counts if code.startswith("5") and code != "501"] == [], counts
    assert "Traceback" not in server.log.read_text(errors="replace")
