"""One writer per run directory (:mod:`dfil.util.lock`; Linux ``/proc`` for liveness).

``dfil train`` and ``dfil evaluate`` hold ``<run>/.writer.lock`` (the project's one lock,
an exclusive ``flock``) for as long as they run, and write who they are into it (pid, host,
command, SLURM job, start). A second writer of the same directory (a rerun started while a
job of a killed Snakemake still runs, a SLURM job submitted again for a cell whose first
job runs on) fails at once with :class:`dfil.util.errors.RunBusyError` naming the holder,
instead of mixing its files with the first one's. The kernel releases the lock when the
holder dies, however it dies, so a killed writer never blocks the next one; the file then
still names it, and a holder that ends empties it. On NFS (and Lustre mounted with
``-o flock``) the lock holds across nodes. Where the filesystem takes no file locks the
run goes on unguarded and says so (no soft lock: a killed holder would leave it behind).

:func:`running_writers` reads the holders without taking the lock, for the Snakefile to
say which jobs of an earlier run are still running.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import socket
from collections.abc import Iterable, Iterator
from pathlib import Path

from dfil.cluster.dirlock import process_start
from dfil.util.errors import RunBusyError
from dfil.util.lock import LockBusy, hold
from dfil.util.lock import read_holder as read_lock_holder

WRITER_FILE = ".writer.lock"


def holder_record(command: str) -> dict:
    """Who this process is, as the writer of a run directory."""
    pid = os.getpid()
    return {"pid": pid, "pid_start": process_start(pid), "host": socket.gethostname(),
            "command": command, "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


@contextlib.contextmanager
def hold_writer(run_dir: str | Path, command: str) -> Iterator[Path]:
    """Be ``run_dir``'s one writer for the block (the lock file's path is yielded);
    :class:`RunBusyError` naming the holder if another process is."""
    run_dir = Path(run_dir)
    path = run_dir / WRITER_FILE
    try:
        with hold(path, wait=False, holder=holder_record(command),
                  unguarded="nothing stops a second writer of this run directory"):
            yield path
    except LockBusy as err:
        if err.path != path:
            raise
        raise RunBusyError(busy_message(run_dir, read_holder(run_dir))) from None


def busy_message(run_dir: Path, holder: dict | None) -> str:
    """One line: who writes ``run_dir`` and what to do about it."""
    if not holder:
        return (f"{run_dir}: another process writes this run directory (its lock "
                f"{run_dir / WRITER_FILE} is held); wait for it to finish, then rerun")
    who = f"pid {holder.get('pid')} on {holder.get('host')}"
    job = holder.get("slurm_job_id")
    stop = f"kill {holder.get('pid')}" + (f", or scancel {job}" if job else "")
    return (f"{run_dir}: another process writes this run directory: {who} "
            f"({holder.get('command')}, since {holder.get('started')}"
            + (f", SLURM job {job}" if job else "") + "); two writers would mix their "
            f"files: wait for it to finish, or stop it ({stop}) and rerun")


def read_holder(run_dir: str | Path) -> dict | None:
    """The holder ``run_dir``'s lock file names, the last one if it was killed (None: no
    lock file, an empty one, or unreadable)."""
    return read_lock_holder(Path(run_dir) / WRITER_FILE)


def is_alive(holder: dict) -> bool | None:
    """Whether the process ``holder`` names still runs: True or False on this host; None
    for a holder on another host (it cannot be checked from here)."""
    if holder.get("host") != socket.gethostname():
        return None
    start = process_start(int(holder.get("pid", 0)))
    return start is not None and start == holder.get("pid_start")


def running_writers(run_dirs: Iterable[Path]) -> list[tuple[Path, dict]]:
    """(run directory, holder) of each directory whose writer may still run: alive on
    this host, or on another host (unknown). Takes no lock."""
    found = []
    for run_dir in run_dirs:
        holder = read_holder(run_dir)
        if holder is not None and is_alive(holder) is not False:
            found.append((Path(run_dir), holder))
    return found
