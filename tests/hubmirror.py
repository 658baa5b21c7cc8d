"""A hub-compatible endpoint on 127.0.0.1 for tests and CI: olah serving local git repos,
behind a thin proxy that can answer as the hub answers a gated repo, stall a transfer, and
counts every request.

olah (PyPI 0.5.4) with ``[accessibility] offline = true`` and ``mirrors-path`` serves the
git repositories of :mod:`hubrepos` (``<mirrors>/models/<org>/<name>``,
``<mirrors>/datasets/<org>/<name>``) through the hub's routes, so huggingface_hub's
``snapshot_download``/``HfApi`` work against it (``HF_ENDPOINT`` or ``endpoint=``). olah has
no authentication; :class:`Proxy` gates a repo in ``gated`` as huggingface.co does: its
metadata (``/api/``) answers anyone, its files answer 401 without an Authorization header
and 403 to a token in ``no_access`` (one whose account has not accepted the licence), both
with ``X-Error-Code: GatedRepo`` (what makes huggingface_hub's ``hf_raise_for_status``
raise GatedRepoError); it gives every file its ``Content-Length`` and
serves ``Range`` requests as the hub does (olah streams whole files without either), can
stall or cut a transfer, and passes everything else through. Both listen on loopback only.

As a command (CI), run from the repository root::

    python tests/hubmirror.py build --mirrors .hub/mirrors --tiny --embedded --frog
    eval "$(python tests/hubmirror.py start --mirrors .hub/mirrors --state .hub/state.json)"
    ...   # HF_ENDPOINT is exported: the fetch steps go through the endpoint
    python tests/hubmirror.py stop --state .hub/state.json
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "host", "accept-encoding"}
OLAH_TOML = """[basic]
host = "127.0.0.1"
port = {port}
repos-path = "{repos}"
mirrors-path = ["{mirrors}"]
metadata-cache-ttl = 0

[accessibility]
offline = true
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_answers(url: str, proc: subprocess.Popen | None = None,
                       timeout: float = 60.0) -> None:
    """Poll ``url`` until it answers (any HTTP status); RuntimeError if ``proc`` exits or
    ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server for {url} exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


class Olah:
    """olah serving ``mirrors`` offline on 127.0.0.1; its config, cache and logs in
    ``workdir``."""

    def __init__(self, mirrors: Path, workdir: Path):
        self.mirrors, self.workdir = Path(mirrors).resolve(), Path(workdir).resolve()
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def start(self, timeout: float = 60.0) -> str:
        self.workdir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        config = self.workdir / "olah.toml"
        config.write_text(OLAH_TOML.format(port=port, repos=self.workdir / "repos",
                                           mirrors=self.mirrors))
        log = open(self.workdir / "olah.out", "ab")  # noqa: SIM115 - the child writes it
        self.proc = subprocess.Popen([sys.executable, "-m", "olah.server", "-c", str(config)],
                                     cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        log.close()
        self.url = f"http://127.0.0.1:{port}"
        try:
            wait_until_answers(self.url + "/", self.proc, timeout)
        except RuntimeError:
            self.stop()
            tail = (self.workdir / "olah.out").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"olah did not start:\n{tail}") from None
        return self.url

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


class Proxy:
    """The proxy in front of olah (see the module docstring).

    ``gated``: repo ids whose files are refused without a token with access;
    ``no_access``: tokens refused them. ``stall``: file name -> bytes
    after which a GET of that file pauses until :attr:`release` is set; ``cut``: file name
    -> bytes after which the next GET of that file loses its connection. ``requests``:
    (method, path, Range header) of every request, in order; ``sent``: body bytes sent per
    path. ``journal``: a file each request is also appended to as one JSON line (time,
    method, path, range), for a process outside the proxy's (CI's ``counts``).
    """

    def __init__(self, upstream: str, journal: Path | None = None):
        self.upstream = urlsplit(upstream)
        self.journal = journal
        self.gated: set[str] = set()
        self.no_access: set[str] = set()
        self.stall: dict[str, int] = {}
        self.cut: dict[str, int] = {}
        self.release = threading.Event()
        self.requests: list[tuple[str, str, str | None]] = []
        self.sent: dict[str, int] = {}
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.url = ""

    def start(self) -> str:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.proxy = self
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        return self.url

    def stop(self) -> None:
        self.release.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def count(self, method: str, suffix: str) -> int:
        """Requests of ``method`` whose path (query aside) ends with ``suffix``."""
        with self.lock:
            return sum(1 for m, p, _ in self.requests
                       if m == method and p.split("?")[0].endswith(suffix))

    def gated_repo(self, path: str) -> str | None:
        """The gated repo whose file ``path`` asks for (metadata answers anyone)."""
        bare = path.split("?")[0]
        for repo in self.gated:
            for prefix in ("/datasets/", "/"):
                if bare.startswith(prefix + repo + "/resolve/"):
                    return repo
        return None

    def refused(self, authorization: str | None) -> int | None:
        """The status a gated file answers this Authorization header with (None: served)."""
        if not authorization:
            return 401
        return 403 if authorization.removeprefix("Bearer ") in self.no_access else None


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def log_message(self, *args) -> None:  # the proxy's record is Proxy.requests
        pass

    def do_GET(self) -> None:
        self._forward("GET")

    def do_HEAD(self) -> None:
        self._forward("HEAD")

    def do_POST(self) -> None:
        self._forward("POST")

    def _forward(self, method: str) -> None:
        proxy: Proxy = self.server.proxy
        wanted = self.headers.get("Range")
        with proxy.lock:
            proxy.requests.append((method, self.path, wanted))
            if proxy.journal is not None:
                with open(proxy.journal, "a") as fh:
                    fh.write(json.dumps({"time": time.time(), "method": method,
                                         "path": self.path, "range": wanted}) + "\n")
        repo = proxy.gated_repo(self.path)
        status = proxy.refused(self.headers.get("Authorization")) if repo else None
        if status:
            return self._gated(repo, method, status)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in HOP_BY_HOP | {"range", "content-length"}}
        conn = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port,
                                          timeout=120)
        try:
            conn.request(method, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            size = resp.getheader("Content-Length")
            if size is None and method != "HEAD":
                size = self._upstream_size(proxy, headers) if "/resolve/" in self.path \
                    else None
            if size is None:  # a small API answer: read it whole to know its length
                data = resp.read()
                size, resp = str(len(data)), _Bytes(data, resp)
            start = _range_start(wanted) if method == "GET" and resp.status == 200 else 0
            self.send_response(206 if start else resp.status)
            for key, value in resp.getheaders():
                if key.lower() not in HOP_BY_HOP | {"content-length"}:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(int(size) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{int(size) - 1}/{size}")
            self.end_headers()
            if method != "HEAD":
                self._send_body(resp, start)
        except (BrokenPipeError, ConnectionResetError):  # the client went away (killed)
            pass
        finally:
            conn.close()

    def _upstream_size(self, proxy: Proxy, headers: dict) -> str | None:
        """A file's length from olah's HEAD (its GET streams without one)."""
        conn = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port,
                                          timeout=120)
        try:
            conn.request("HEAD", self.path, headers=headers)
            return conn.getresponse().getheader("Content-Length")
        finally:
            conn.close()

    def _gated(self, repo: str, method: str, status: int) -> None:
        message = (f"Access to model {repo} is restricted. You must have access to it and be "
                   "authenticated to access it. Please log in." if status == 401 else
                   f"Access to model {repo} is restricted and you are not in the authorized "
                   "list. Visit its page to ask for access.")
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", "GatedRepo")
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(body)

    def _send_body(self, resp, start: int) -> None:
        """Stream the body from byte ``start``, counting bytes per path; at a file's
        ``stall`` limit pause until released, at its ``cut`` limit close the connection
        (once)."""
        proxy: Proxy = self.server.proxy
        name = self.path.split("?")[0].rsplit("/", 1)[-1]
        stall = proxy.stall.get(name)
        with proxy.lock:
            cut = proxy.cut.pop(name, None)
        skip, done = start, 0
        while piece := resp.read(64 * 1024):
            if skip:
                piece, skip = piece[skip:], max(skip - len(piece), 0)
            if cut is not None and done + len(piece) > cut:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(piece)
            done += len(piece)
            with proxy.lock:
                proxy.sent[self.path] = proxy.sent.get(self.path, 0) + len(piece)
            if stall is not None and done >= stall:
                self.wfile.flush()
                proxy.release.wait()
                stall = None


class _Bytes:
    """An answer already read whole, readable again in pieces like the original."""

    def __init__(self, data: bytes, resp):
        self.data, self.status, self.resp = data, resp.status, resp

    def getheaders(self):
        return self.resp.getheaders()

    def read(self, n: int) -> bytes:
        piece, self.data = self.data[:n], self.data[n:]
        return piece


def _range_start(header: str | None) -> int:
    """The first byte of a ``bytes=N-`` request (0 for none or another form)."""
    if not header or not header.startswith("bytes=") or not header.endswith("-"):
        return 0
    try:
        return int(header[len("bytes="):-1])
    except ValueError:
        return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from hubmirror_cli import main

    sys.exit(main())
