"""One writer per run directory (``filelock``; Linux ``/proc`` for liveness).

``dfil train`` and ``dfil evaluate`` hold ``<run>/.writer.lock`` (a ``filelock.FileLock``,
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
import errno
import json
import os
import socket
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from dfil.cluster.dirlock import process_start
from dfil.util.errors import DiskFullError, RunBusyError

WRITER_FILE = ".writer.lock"
#: ``flock`` unsupported by the filesystem: the run goes on unguarded, and says so.
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


def holder_record(command: str) -> dict:
    """Who this process is, as the writer of a run directory."""
    pid = os.getpid()
    return {"pid": pid, "pid_start": process_start(pid), "host": socket.gethostname(),
            "command": command, "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}


def _file_lock(path: Path) -> FileLock:
    """The writer's ``FileLock`` on ``path``, its mode what the umask allows (``filelock``
    sets the mode it is given exactly; a results tree shared by a group keeps group
    write where the umask gives it), with no soft-lock fallback where ``filelock`` has
    one."""
    umask = os.umask(0)
    os.umask(umask)
    mode = 0o666 & ~umask
    try:
        return FileLock(path, mode=mode, fallback_to_soft=False)
    except TypeError:  # a filelock without the fallback has no such argument
        return FileLock(path, mode=mode)


@contextlib.contextmanager
def hold_writer(run_dir: str | Path, command: str) -> Iterator[Path]:
    """Be ``run_dir``'s one writer for the block (the lock file's path is yielded);
    :class:`RunBusyError` naming the holder if another process is."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / WRITER_FILE
    lock = _file_lock(path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise RunBusyError(busy_message(run_dir, read_holder(run_dir))) from None
    except (OSError, NotImplementedError) as err:
        if isinstance(err, OSError) and err.errno not in _NO_LOCKS:
            raise
        print(f"dfil: {path}: this filesystem takes no file locks ({err}); nothing stops "
              "a second writer of this run directory", file=sys.stderr)
        yield path
        return
    try:
        _write_holder(path, holder_record(command))
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.truncate(path, 0)  # before releasing: the next holder writes its own
        lock.release()


def _write_holder(path: Path, record: dict) -> None:
    """``record`` as the lock file's content (one JSON line); a full disk is named."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(record, sort_keys=True) + "\n").encode())
    except OSError as err:  # a full disk: the first write of a job
        if err.errno != errno.ENOSPC:
            raise
        raise DiskFullError.from_oserror(err, path) from err
    finally:
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
    """The holder ``run_dir``'s lock file names, the last one if it was killed (None: no
    lock file, an empty one, or unreadable)."""
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
