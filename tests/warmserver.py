"""A warm server (``dfil warm serve``) for tests, in a child process, on a short socket
path; its training steps can wait for SIGTERM at a chosen step (``WARM_TEST_PAUSE_AT``
in the client's environment: the step, counted over loss computations; the server's
child touches ``WARM_TEST_MARK`` and waits there until SIGTERM reaches it), and its
commands that read a grid crash where the client's environment has ``WARM_TEST_CRASH``
(:func:`install_crash`, which a direct run installs too)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

SERVER = """
import os, signal, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import warmserver
warmserver.install_crash()
import dfil.train.step as t
real, calls = t.compute_loss, [0]
def pausing(*a, **k):
    calls[0] += 1
    if calls[0] == int(os.environ.get("WARM_TEST_PAUSE_AT", "0")):
        previous, fired = signal.getsignal(signal.SIGTERM), []
        def note(signum, frame):
            fired.append(signum)
            previous(signum, frame)
        signal.signal(signal.SIGTERM, note)
        Path(os.environ["WARM_TEST_MARK"]).touch()
        while not fired:
            time.sleep(0.02)
        signal.signal(signal.SIGTERM, previous)
    return real(*a, **k)
t.compute_loss = pausing
from dfil.cli.warmserve import serve
serve(sys.argv[1], sys.argv[2].split(","), idle=60)
"""


@contextmanager
def warm_server(preload: str = "torch,pandas,dfil.cli.jobs,dfil.train.driver,"
                "dfil.evaluate.run"):
    """Yields (socket path, log path, server process); stops the server at the end."""
    where = Path(tempfile.mkdtemp(prefix="dfil-warm-test-"))
    path, log = where / "socket", where / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", SERVER, str(path), preload,
                                 str(Path(__file__).parent)],
                                stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                env={**os.environ, "DFIL_PROGRESS": "0"})
    try:
        deadline = time.monotonic() + 120
        while not path.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield path, log, proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def install_crash() -> None:
    """``dfil.config.grid.group_points`` raises an uncaught TypeError where the environment has
    ``WARM_TEST_CRASH`` (a programming error's path: traceback, exit 1), and copies
    ``/proc/self/status`` to the file ``WARM_TEST_STATUS`` names."""
    import dfil.config.grid

    real = dfil.config.grid.group_points

    def crash_if_asked(*args, **kwargs):
        if os.environ.get("WARM_TEST_CRASH"):
            raise TypeError("the crash a test asked for")
        if where := os.environ.get("WARM_TEST_STATUS"):  # the process's signal masks
            Path(where).write_text(Path("/proc/self/status").read_text())
        return real(*args, **kwargs)

    dfil.config.grid.group_points = crash_if_asked
