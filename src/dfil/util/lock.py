"""Every lock ``dfil`` takes: an exclusive ``flock`` on a lock file through ``filelock``.

:func:`hold` holds one for a block. It waits for another holder (after a line saying so,
if asked) or refuses at once with :class:`LockBusy`, and can write a holder record into
the lock file while it holds it (who holds it, for the process that is refused). The
kernel releases the lock when its holder dies, however it dies, so a killed holder never
blocks the next one. Where the filesystem takes no file locks the block runs unguarded
and one line says so: a soft lock would outlive a killed holder. The lock file's mode is
what the umask allows, so a directory shared by a group keeps group write.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from dfil.util.atomic import current_umask
from dfil.util.errors import DiskFullError

#: ``flock`` unsupported by the filesystem: the block runs unguarded, and says so.
NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)


class LockBusy(Exception):
    """Another process holds the lock on :attr:`path` and the caller would not wait."""

    def __init__(self, path: Path):
        super().__init__(f"{path}: held by another process")
        self.path = path


def lock_mode() -> int:
    """The mode of a lock file this process creates: a new file's (0666 less the umask)."""
    return 0o666 & ~current_umask()


def file_lock(path: Path) -> FileLock:
    """The ``FileLock`` on ``path``: its mode :func:`lock_mode` (``filelock`` sets the
    mode it is given exactly), with no soft-lock fallback where ``filelock`` has one."""
    try:
        return FileLock(str(path), mode=lock_mode(), fallback_to_soft=False)
    except TypeError:  # a filelock without the fallback has no such argument
        return FileLock(str(path), mode=lock_mode())


@contextlib.contextmanager
def hold(path: str | Path, *, wait: bool = True, waiting: str | None = None,
         holder: dict | None = None,
         unguarded: str = "nothing stops a second process from taking it") -> Iterator[Path]:
    """Hold the lock on ``path`` for the block (``path`` is yielded).

    Parameters
    ----------
    path
        The lock file; its directory is made if missing.
    wait
        Wait for another holder to release it; False raises :class:`LockBusy` at once.
    waiting
        A line printed to stderr (after ``dfil: ``) before waiting for another holder.
    holder
        A record written into the lock file as one JSON line while the lock is held, and
        emptied before it is released (the next holder writes its own).
    unguarded
        What a filesystem without file locks leaves open, for the line that says so.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = file_lock(path)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if not wait:
            raise LockBusy(path) from None
        if waiting:
            print(f"dfil: {waiting}", file=sys.stderr)
        lock.acquire()
    except (OSError, NotImplementedError) as err:
        if isinstance(err, OSError) and err.errno not in NO_LOCKS:
            raise
        print(f"dfil: {path}: this filesystem takes no file locks ({err}); {unguarded}",
              file=sys.stderr)
        yield path
        return
    try:
        if holder is not None:
            _write_holder(path, holder)
        yield path
    finally:
        if holder is not None:
            with contextlib.suppress(OSError):
                os.truncate(path, 0)
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


def read_holder(path: str | Path) -> dict | None:
    """The holder record in the lock file ``path``, the last holder's if it was killed
    (None: no lock file, an empty one, or unreadable)."""
    try:
        record = json.loads(Path(path).read_bytes().decode())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None
