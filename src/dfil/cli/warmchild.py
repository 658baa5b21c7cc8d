"""The warm server's forked child (:mod:`dfil.cli.warmserve`): it becomes its client's
process (a fresh Python's signal handlers but the client's ignored signals, its working
directory, environment and standard streams), runs ``dfil.cli.main`` and ends as a
``dfil`` process would: its return value, 1 and the traceback for an uncaught exception,
death by SIGINT after an uncaught KeyboardInterrupt."""

from __future__ import annotations

import io
import os
import signal
import sys
import time

from dfil.cli import warm

#: A fresh Python's handlers, where not the default action (:data:`warm.HANDLED`).
FRESH = {signal.SIGINT: signal.default_int_handler, signal.SIGPIPE: signal.SIG_IGN,
         signal.SIGXFSZ: signal.SIG_IGN}


def become(request: dict, fds: list[int]) -> None:
    """The client's signal dispositions (then the relayed signals, blocked by the server
    across the fork, unblocked), working directory, environment and standard streams."""
    import tempfile

    for signum in warm.HANDLED:
        signal.signal(signum, signal.SIG_IGN if signum in request["ignored"]
                      else FRESH.get(signum, signal.SIG_DFL))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, warm.RELAYED)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from TMPDIR
    time.tzset()
    for target in (0, 1, 2):
        if target in request["fds"]:
            os.dup2(fds[request["fds"].index(target)], target)
        else:
            os.close(target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    unbuffered = sys.stdout.write_through  # PYTHONUNBUFFERED (the same for both: refused else)
    streams = [_stream(fd, old, unbuffered) if fd in request["fds"] else None
               for fd, old in enumerate((sys.stdin, sys.stdout, sys.stderr))]
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    sys.argv = [request["argv0"], *request["argv"]]


def _stream(fd: int, old: io.TextIOWrapper, unbuffered: bool) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as Python's start-up makes it (PYTHONUNBUFFERED too)."""
    raw = open(fd, "wb" if fd else "rb", buffering=0 if unbuffered and fd else -1,
               closefd=False)
    return io.TextIOWrapper(raw, encoding=old.encoding, errors=old.errors,
                            line_buffering=not unbuffered and bool(fd) and (
                                fd == 2 or os.isatty(fd)), write_through=unbuffered)


def run(argv: list[str]) -> int | signal.Signals:
    """``dfil argv`` as the console script runs it: its exit status, or SIGINT where an
    uncaught KeyboardInterrupt ends it (Python then ends by that signal)."""
    from dfil.cli import main

    warm.IN_CHILD = True
    try:
        return int(main(argv) or 0)
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException as err:  # noqa: BLE001 - printed from main's frame on, as Python does
        sys.excepthook(type(err), err, err.__traceback__.tb_next)
        return signal.SIGINT if isinstance(err, KeyboardInterrupt) else 1


def end(code: int | signal.Signals) -> None:
    """End as an interpreter does: join threads, run atexit, flush, exit (or die by
    ``code``'s signal)."""
    import atexit
    import threading

    try:
        getattr(threading, "_shutdown", lambda: None)()
        atexit._run_exitfuncs()
    finally:
        _flush()
        if isinstance(code, signal.Signals):
            signal.signal(code, signal.SIG_DFL)
            os.kill(os.getpid(), code)
        os._exit(code & 0xFF)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
