"""The warm starter's client side: a ``dfil`` command handed to a local server that has
imported the heavy libraries once (:mod:`dfil.cli.warmserve`), and the server's start and
stop for a local Snakemake run.

A local job's ``dfil`` process spends most of its seconds importing torch, pandas and
transformers. With ``DFIL_WARM_SOCKET`` naming a server's socket, :func:`forward` sends
the command line, working directory, environment and the process's stdin/stdout/stderr
(``SCM_RIGHTS``) to the server, which forks a child that runs it; this process stays the
job: it relays SIGTERM, SIGINT and SIGHUP to the child and ends as the child ended (its
exit status, or the signal that killed it). Without the variable, with ``DFIL_WARM=0``, or
when the server does not answer or refuses, the command runs in this process as
always. This module imports nothing heavy: it runs before the command's own imports."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import dfil

if TYPE_CHECKING:
    import socket
    import subprocess

SOCKET_VAR = "DFIL_WARM_SOCKET"
SWITCH_VAR = "DFIL_WARM"
RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: Signals whose disposition a child takes from its client: a fresh Python's, except the
#: ones the client's process inherited as ignored (a job started by ``cmd &`` in a script
#: ignores SIGINT), which the child ignores too and the client does not relay.
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE, signal.SIGCHLD,
           signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXFSZ)
#: What the jobs import: loaded once by the server (peft and bitsandbytes stay lazy: only
#: LoRA and 4-bit cells import them). ``torch._dynamo`` is what an optimizer's first step
#: imports (about 1.2 s of every training job); the Llama modules are the embedded and
#: smoke backbones' (a feature or zero-shot job's model).
PRELOAD = ("torch", "torch._dynamo", "pandas", "pyarrow.parquet", "transformers",
           "transformers.modeling_utils", "transformers.models.llama.modeling_llama",
           "dfil.cli.jobs", "dfil.cli.features", "dfil.train.driver", "dfil.evaluate.run",
           "dfil.results.aggregate", "dfil.render.build", "dfil.report.build")
#: What Snakemake sets for a local job of one thread (its ``threads:``): the server starts
#: with them, as the libraries read them when imported; a job with other values is refused.
THREAD_VARS = ("OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: Set in the server's children: a command there never forwards again.
IN_CHILD = False


def forward(argv: list[str] | None) -> int | None:
    """Run ``dfil argv`` in a child of the warm server and return its exit status; None
    where it is to run in this process (no server, ``DFIL_WARM=0``, ``dfil warm``, or the
    server refused it before starting a child)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    path = os.environ.get(SOCKET_VAR)
    if (not path or IN_CHILD or os.environ.get(SWITCH_VAR) == "0" or argv[:1] == ["warm"]
            or not _main_thread()):  # only the main thread can take the signals to relay
        return None
    conn = _connect(path)
    if conn is None:
        return None
    with conn:
        return _relay(conn, argv)


def _connect(path: str) -> socket.socket | None:
    """A connection to the server at ``path``; None where nothing answers there."""
    import socket  # here: a run without a server loads nothing for it

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def _relay(conn: socket.socket, argv: list[str]) -> int | None:
    import socket

    fds = [fd for fd in (0, 1, 2) if _is_open(fd)]
    ignored = [int(s) for s in HANDLED if signal.getsignal(s) == signal.SIG_IGN]
    body = json.dumps({"argv": argv, "argv0": sys.argv[0], "cwd": os.getcwd(),
                       "env": dict(os.environ), "fds": fds, "ignored": ignored,
                       "executable": sys.executable,
                       "package": os.path.dirname(dfil.__file__)}).encode()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    child, pending = [], []

    def relay(signum, frame):
        if child:
            os.kill(child[0], signum)
        else:
            pending.append(signum)

    previous = {s: signal.signal(s, relay) for s in RELAYED if s not in ignored}
    try:
        socket.send_fds(conn, [len(body).to_bytes(8, "big") + body], fds)
        lines = _lines(conn)
        first = next(lines, "refused: no answer").split()
        if first[0] == "pid":
            child.append(int(first[1]))
            for signum in pending:
                os.kill(child[0], signum)
            word, value = next(lines, "lost 1").split()
        else:
            word, value = "refused", "0"
    except OSError:
        word, value = ("lost", "1") if child else ("refused", "0")
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    for signum in pending if not child else ():
        os.kill(os.getpid(), signum)  # a signal before any child: this process takes it
    return _status(word, int(value))


def _status(word: str, value: int) -> int | None:
    """The exit status the child's end calls for (``signal N``: this process dies of N)."""
    if word == "refused":
        return None
    if word == "signal":
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
        return 128 + value
    if word == "lost":
        print(f"dfil: the warm server ({os.environ.get(SOCKET_VAR)}) stopped before this "
              "command ended; rerun it (DFIL_WARM=0 runs it without the server)",
              file=sys.stderr)
    return value


def _lines(conn: socket.socket):
    """The server's replies, one line each, until it closes."""
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode()
        data = conn.recv(4096)
        if not data:
            return
        buf += data


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def add_warm_parser(command, sub) -> None:
    """``dfil warm serve``: the server a local Snakemake run starts (``DFIL_WARM=0``: none;
    not for users)."""
    p = command(sub, "warm", "serve dfil commands from one process that has imported the "
                "libraries once, forking a child per command (a local Snakemake run starts "
                "it; DFIL_WARM=0 turns it off)", _cmd_warm)
    p.add_argument("action", choices=["serve"])
    p.add_argument("--socket", type=Path, required=True, help="the AF_UNIX socket to serve")
    p.add_argument("--preload", default=",".join(PRELOAD),
                   help="modules imported once, comma-separated")
    p.add_argument("--idle", type=float, default=1800.0,
                   help="stop after this many seconds without a command")


def _cmd_warm(args) -> int:
    from dfil.cli.warmserve import serve

    serve(args.socket, [m for m in args.preload.split(",") if m], idle=args.idle)
    return 0


def start_server(log: Path, wait: float = 60.0, threads: int = 1
                 ) -> tuple[subprocess.Popen, str] | None:
    """Start ``dfil warm serve`` in the background (its own session, so a terminal's ^C
    reaches jobs only through their clients; its output in ``log``; the thread variables
    of a ``threads``-thread job), wait until its socket answers, and set
    ``DFIL_WARM_SOCKET`` for the jobs this process starts. None, and one line on stderr,
    where it never answers."""
    import subprocess
    import tempfile

    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            path = os.path.join(tempfile.mkdtemp(prefix="dfil-warm-"), "socket")
            proc = subprocess.Popen(
                [sys.executable, "-m", "dfil.cli", "warm", "serve", "--socket", path],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                env={**os.environ, **dict.fromkeys(THREAD_VARS, str(threads))})
    except OSError as err:  # a full disk, an unwritable log: the jobs start as always
        print(f"dfil: the warm server could not start ({err}): jobs import their "
              "libraries themselves", file=sys.stderr)
        return None
    deadline = time.monotonic() + wait
    while proc.poll() is None and time.monotonic() < deadline:
        if (probe := _connect(path)) is not None:
            probe.close()
            os.environ[SOCKET_VAR] = path
            return proc, path
        time.sleep(0.1)
    stop_server((proc, path))
    print(f"dfil: the warm server did not start in {wait:.0f} s (see {log}): jobs import "
          "their libraries themselves", file=sys.stderr)
    return None


def stop_server(server: tuple[subprocess.Popen, str] | None) -> None:
    """Stop a server :func:`start_server` started (SIGTERM: it takes no new command,
    and its running children end as their clients do) and remove its socket."""
    import subprocess

    if server is None:
        return
    proc, path = server
    if os.environ.get(SOCKET_VAR) == path:
        del os.environ[SOCKET_VAR]
    if proc.poll() is None:
        proc.terminate()
        try:  # its last children end with their clients, which have ended
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(OSError):
        os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))
