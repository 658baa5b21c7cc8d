"""The warm starter's server: imports the libraries ``dfil`` jobs use once, then forks a
child per command a client (:mod:`dfil.cli.warm`) sends over an AF_UNIX socket.

A request is the command line, working directory, environment, ignored signals and the
client's stdin/stdout/stderr (``SCM_RIGHTS``). The child takes them as its own, with a
fresh Python's signal handlers (the client's ignored ones ignored; never the server's),
runs ``dfil.cli.main`` and ends as a ``dfil`` process would (:mod:`dfil.cli.warmchild`).
The server answers ``pid N`` at the fork, ``exit N`` or ``signal N`` at the child's end
(and logs the child's peak RSS and CPU time), and kills a child whose client
disconnected first (it was killed). A request from another interpreter or checkout, or
whose environment differs in a variable read at import (thread counts, hub, CUDA, Python
settings), is refused: its client runs it. No torch operation runs before a fork (an
OpenMP pool started before a fork can hang the child). The server stops on SIGTERM, when
its parent is gone, or after ``idle`` seconds without work."""

from __future__ import annotations

import importlib
import json
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from pathlib import Path

import dfil
from dfil.cli import warm
from dfil.cli.warmchild import become, end, run

#: Variables read when a library is imported (or its native code loaded): a child could
#: not take a client's different value, so such a request is refused.
IMPORT_TIME = ("OMP_", "MKL_", "OPENBLAS_", "GOTO_", "VECLIB_", "NUMEXPR_", "KMP_", "GOMP_",
               "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TOKENIZERS_", "TORCH", "PYTORCH_",
               "CUDA_", "CUBLAS_", "NVIDIA_", "PYTHON", "LD_", "MPL", "XDG_CACHE_HOME")
PARENT_CHECK = 2.0


def say(text: str) -> None:
    """One line of the server's log (no buffered stream: a fork never copies a half line)."""
    os.write(2, f"{time.strftime('%H:%M:%S')} dfil warm: {text}\n".encode(errors="replace"))


def serve(path: Path, preload: list[str], idle: float = 1800.0) -> None:
    """Serve ``path`` until SIGTERM, the parent's end, or ``idle`` seconds without work."""
    started = time.monotonic()
    # Requests are compared with the environment the server started with: an import may
    # set variables (torch._dynamo sets TORCHINDUCTOR_CACHE_DIR), as a direct run's would.
    env = dict(os.environ)
    for name in preload:
        importlib.import_module(name)
    say(f"pid {os.getpid()} imported {', '.join(preload)} in {time.monotonic() - started:.1f} s")
    if "torch" in sys.modules and sys.modules["torch"].cuda.is_initialized():
        return say("not serving: CUDA started while importing, and a fork cannot use it")
    stop: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append("SIGTERM"))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C reaches jobs via clients
    Server(path, idle, env).run(stop)


class Server:
    """The socket, children and clients, in one thread (no other thread's lock is forked)."""

    def __init__(self, path: Path, idle: float, env: dict[str, str]):
        self.path, self.idle, self.env = str(path), idle, env
        self.origin = {"executable": sys.executable, "package": os.path.dirname(dfil.__file__)}
        self.parent = os.getppid()
        Path(self.path).unlink(missing_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(64)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.jobs: dict[int, dict] = {}  # pid: {conn, pidfd, argv}
        say(f"serving {self.path}")

    def run(self, stop: list[str]) -> None:
        last_work, last_check = time.monotonic(), 0.0
        while self.listener is not None or self.jobs:
            for key, _ in self.selector.select(timeout=1.0):
                kind, pid = key.data
                try:
                    getattr(self, kind)(pid)
                except Exception:  # noqa: BLE001 - a failed request never stops the others
                    say(f"{kind} {pid}: {traceback.format_exc()}")
                last_work = time.monotonic()
            now = time.monotonic()
            if self.jobs:
                last_work = now
            why = stop[0] if stop else None
            if now - last_check > PARENT_CHECK:
                last_check = now
                if os.getppid() != self.parent:
                    why = f"its parent (pid {self.parent}) is gone"
            if now - last_work > self.idle:
                why = f"idle for {self.idle:.0f} s"
            if why and self.listener is not None:
                self.close_listener(why)
        say("stopped")

    def close_listener(self, why: str) -> None:
        say(f"stopping ({why}); {len(self.jobs)} command(s) running")
        self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        Path(self.path).unlink(missing_ok=True)

    def accept(self, _=None) -> None:
        conn, _ = self.listener.accept()
        conn.settimeout(30)
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):  # a probe of the socket, or a broken client
            conn.close()
            return
        refusal = self.refusal(request)
        if refusal:
            say(f"refused {' '.join(request['argv'])}: {refusal}")
            _send(conn, "refused")
            conn.close()
            _close(fds)
            return
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        # The relayed signals stay pending, not lost (the server ignores SIGINT and keeps
        # SIGTERM for itself), from the fork until the child has its own handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, warm.RELAYED)
        pid = os.fork()
        if pid == 0:
            self.child(request, fds, conn)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, warm.RELAYED)
        _close(fds)
        pidfd = os.pidfd_open(pid)
        self.jobs[pid] = {"conn": conn, "pidfd": pidfd, "argv": request["argv"]}
        self.selector.register(pidfd, selectors.EVENT_READ, ("reap", pid))
        self.selector.register(conn, selectors.EVENT_READ, ("client_gone", pid))
        say(f"pid {pid}: dfil {' '.join(a[:200] for a in request['argv'])}")
        _send(conn, f"pid {pid}")

    def refusal(self, request: dict) -> str | None:
        """Why a child of this server could not run ``request`` as its own process would."""
        for key, value in self.origin.items():
            if request.get(key) != value:
                return f"{key} {request.get(key)} is not the server's {value}"
        env = request["env"]
        for name in sorted(set(env) | set(self.env)):
            if name.startswith(IMPORT_TIME) and env.get(name) != self.env.get(name):
                return f"{name}={env.get(name)} (the server's: {self.env.get(name)})"
        return None

    def reap(self, pid: int) -> None:
        job = self.jobs.pop(pid)
        _, status, usage = os.wait4(pid, 0)
        if os.WIFSIGNALED(status):
            reply = f"signal {os.WTERMSIG(status)}"
        else:
            reply = f"exit {os.waitstatus_to_exitcode(status)}"
        # The job's own figures (its client's, which Snakemake's benchmark files measure,
        # are a relay's): peak RSS, pages shared with the server included, and CPU time.
        say(f"pid {pid}: {reply} (peak RSS {usage.ru_maxrss / 1024:.0f} MB, CPU "
            f"{usage.ru_utime + usage.ru_stime:.1f} s)")
        self.selector.unregister(job["pidfd"])
        if self.selector.get_map().get(job["conn"]) is not None:  # not yet found gone
            self.selector.unregister(job["conn"])
        _send(job["conn"], reply)
        job["conn"].close()
        os.close(job["pidfd"])

    def client_gone(self, pid: int) -> None:
        """The client's socket is readable: it sent nothing more, so it has closed (was
        killed); a direct run would have died with it."""
        job = self.jobs[pid]
        self.selector.unregister(job["conn"])
        say(f"pid {pid}: its client is gone, killing it")
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def child(self, request: dict, fds: list[int], conn: socket.socket) -> None:
        """In the forked child: become the client's process and run its command."""
        code = 1
        try:
            for job in self.jobs.values():
                job["conn"].close()
                os.close(job["pidfd"])
            self.selector.close()
            self.listener.close()
            conn.close()
            become(request, fds)
            code = run(request["argv"])
        except BaseException:  # noqa: BLE001 - the child must never return into the server
            traceback.print_exc()
        end(code)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    if len(data) < 8:
        _close(fds)
        raise ValueError("no request")
    size = int.from_bytes(data[:8], "big")
    body = data[8:]
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            _close(fds)
            raise ValueError("a truncated request")
        body += more
    return json.loads(body), list(fds)


def _send(conn: socket.socket, line: str) -> None:
    try:
        conn.sendall(f"{line}\n".encode())
    except OSError:  # the client is gone; its child is reaped all the same
        pass


def _close(fds) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
