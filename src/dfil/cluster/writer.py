"""One writer per run directory (pure Python, Linux ``/proc`` for liveness).

``dfil train`` and ``dfil evaluate`` hold an exclusive ``flock`` on ``<run>/.writer.lock``
for as long as they run, and write who they are into it (pid, host, command, start). A
second writer of the same directory (a rerun started while a job of a killed Snakemake
still runs, a SLURM job submitted again for a cell whose first job runs on) fails at
once with :class:`dfil.errors.RunBusyError` naming the holder, instead of mixing its files
with the first one's. The kernel releases the lock when the holder dies, however it dies,
so a killed writer never blocks the next one; the file's content then only says who held
it last. On NFS (and Lustre mounted with ``-o flock``) the lock holds across nodes.

:func:`running_writers` reads the holders without taking any lock, for the Snakefile to
say which jobs of an earlier run are still running.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from dfil.cluster.dirlock import process_start
from dfil.errors import DiskFullError, RunBusyError

WRITER_FILE = ".writer.lock"
#: flock unsupported by the filesystem: the run goes on unlocked, and says so.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


def holder_record(command: str) -> dict:
    """Who this process is, as a lock holder."""
    pid = os.getpid()
    return {"pid": pid, "pid_start": process_start(pid), "host": socket.gethostname(),
            "command": command, "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


@contextlib.contextmanager
def hold_writer(run_dir: str | Path, command: str) -> Iterator[Path]:
    """Hold ``run_dir``'s writer lock for the block; :class:`RunBusyError` naming the
    holder if another process holds it. The lock file is removed on the way out."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / WRITER_FILE
    fd = _acquire(path, run_dir)
    try:
        if fd is not None:
            os.ftruncate(fd, 0)
            try:
                os.write(fd, (json.dumps(holder_record(command), sort_keys=True)
                              + "\n").encode())
            except OSError as err:  # a full disk: the first write of a job
                if err.errno != errno.ENOSPC:
                    raise
                raise DiskFullError.from_oserror(err, path) from err
        yield path
    finally:
        if fd is not None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # before releasing: a waiting opener re-checks the inode
            os.close(fd)


def _acquire(path: Path, run_dir: Path) -> int | None:
    """An open descriptor of ``path`` holding its flock (None where the filesystem has no
    locks). Retries when the file it locked was removed meanwhile by the holder leaving."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _parse(os.read(fd, 4096))
            os.close(fd)
            raise RunBusyError(busy_message(run_dir, holder)) from None
        except OSError as err:
            os.close(fd)
            if err.errno not in _NO_LOCKS:
                raise
            print(f"dfil: {path}: this filesystem takes no file locks ({err.strerror}); "
                  "nothing stops a second writer of this run directory", file=sys.stderr)
            return None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)


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


def _parse(data: bytes) -> dict | None:
    try:
        record = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def read_holder(run_dir: str | Path) -> dict | None:
    """The last holder ``run_dir``'s lock file names (None: no lock file, or unreadable)."""
    try:
        return _parse((Path(run_dir) / WRITER_FILE).read_bytes())
    except OSError:
        return None


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
