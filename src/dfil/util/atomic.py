"""Atomic file writes: a half-written file never carries its final name."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dfil.util.errors import DiskFullError, WriteRefusedError

#: A write the filesystem refused: no permission, or a read-only filesystem.
WRITE_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def current_umask() -> int:
    """The process's umask, read without changing it where Linux shows it (other threads
    never see a changed mask); elsewhere set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write; on success fsync it and rename it
    over ``path``; on failure remove it.

    The file gets the mode a plain ``open(path, "w")`` would give it (0666 less the
    umask: group-readable by default), not mkstemp's private 0600, so results on a shared
    cluster filesystem are readable by whoever the user's umask lets read them.

    A write that runs out of space (ENOSPC, in the caller's writes or here, also where a
    library wrapped it: :func:`is_disk_full`) raises :class:`dfil.util.errors.DiskFullError`
    naming ``path``; a write the filesystem refuses (:func:`write_refused`: a read-only
    location) raises :class:`dfil.util.errors.WriteRefusedError` naming it. The temporary
    file is removed.
    """
    path = Path(path)
    tmp = None
    try:
        with _write_errors_named(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                       dir=path.parent)
            os.close(fd)
            yield Path(tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
                # After the write: a library may have replaced the file with its own
                # (safetensors 0.8 writes a private 0600 one).
                os.fchmod(fh.fileno(), 0o666 & ~current_umask())
            os.replace(tmp, path)
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def _write_errors_named(path: Path) -> Iterator[None]:
    """Turn a write that ran out of space (:func:`is_disk_full`) into a
    :class:`DiskFullError`, and one the filesystem refused (:func:`write_refused`) into a
    :class:`WriteRefusedError`, naming ``path``; any other error passes unchanged."""
    try:
        yield
    except Exception as err:
        if isinstance(err, DiskFullError | WriteRefusedError):
            raise
        if is_disk_full(err):
            raise DiskFullError.from_oserror(err, path) from err
        if (refused := write_refused(err)) is not None:
            raise WriteRefusedError.from_oserror(refused, path) from err
        raise


@contextlib.contextmanager
def atomic_dir(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling directory of ``path`` to fill; on success fsync its files
    and rename it over ``path``, so ``path`` is never half there. What was at ``path`` is
    renamed away first and removed only once the new tree is in place; if that fails it
    is put back (or, failing that too, left beside ``path``: never lost). On failure the
    temporary tree is removed. The folder gets a plain ``mkdir``'s mode (0777 less the
    umask, and the parent's setgid bit: a group-shared tree stays its group's), not
    mkdtemp's private 0700. A full disk or a refused write raises :class:`DiskFullError`
    or :class:`WriteRefusedError` naming ``path``."""
    path = Path(path)
    tmp = old = None
    placed = False
    try:
        with _write_errors_named(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp",
                                        dir=path.parent))
            old = tmp.with_suffix(".old")
            yield tmp
            for file in (f for f in tmp.rglob("*") if f.is_file()):
                with open(file, "rb") as fh:
                    os.fsync(fh.fileno())
            setgid = os.stat(tmp).st_mode & stat.S_ISGID
            os.chmod(tmp, (0o777 & ~current_umask()) | setgid)
            if os.path.lexists(path):
                os.replace(path, old)
            os.replace(tmp, path)
            placed = True
    finally:
        if not placed and old is not None and os.path.lexists(old) \
                and not os.path.lexists(path):
            with contextlib.suppress(OSError):
                os.replace(old, path)
        _remove(tmp)
        if placed:
            _remove(old)


def _remove(path: Path | None) -> None:
    """Remove the tree or file at ``path`` if there is one (best effort)."""
    import shutil

    if path is None or not os.path.lexists(path):
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def atomic_copytree(src: str | Path, dst: str | Path) -> None:
    """Copy the directory ``src`` to ``dst`` so that ``dst`` is never half there
    (:func:`atomic_dir`). A full disk raises :class:`DiskFullError` naming ``dst``."""
    import shutil

    with atomic_dir(dst) as tmp:
        shutil.copytree(src, tmp, dirs_exist_ok=True)


def is_disk_full(err: BaseException) -> bool:
    """Whether ``err`` is a write that ran out of space: an ``OSError`` with ENOSPC, or an
    error a library raised for one (torch's writer raises ``RuntimeError`` with the
    ``OSError`` as its context; safetensors words it in its message)."""
    seen: set[int] = set()
    node: BaseException | None = err
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, OSError) and node.errno == errno.ENOSPC:
            return True
        if "No space left on device" in str(node):
            return True
        node = node.__cause__ or node.__context__
    return False


def write_refused(err: BaseException) -> OSError | None:
    """The ``OSError`` in ``err``'s chain that is a refused write (EACCES, EPERM, EROFS:
    a read-only output), or None; a library may wrap it (torch raises ``RuntimeError``
    with the ``OSError`` as its context)."""
    seen: set[int] = set()
    node: BaseException | None = err
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if isinstance(node, OSError) and node.errno in WRITE_REFUSED:
            return node
        node = node.__cause__ or node.__context__
    return None


def write_error(err: BaseException) -> DiskFullError | WriteRefusedError | None:
    """The input error a failed write stands for, naming the file the ``OSError`` names:
    a full disk or a refused write anywhere in ``err``'s chain; None for anything else."""
    unnamed = "a file being written"
    if is_disk_full(err):
        return DiskFullError.from_oserror(err, getattr(err, "filename", None) or unnamed)
    if (refused := write_refused(err)) is not None:
        return WriteRefusedError.from_oserror(refused, refused.filename or unnamed)
    return None


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """``text`` as UTF-8, written atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    """Pretty, key-sorted JSON, written atomically."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())
