"""What to do about a Snakemake run that was killed: its directory lock, its incomplete
files, and the ``dfil`` jobs it had started (Linux ``/proc``; pure Python).

A Snakemake run locks the working directory (``.snakemake/locks/``) and removes the lock
when it ends; a hard kill (SIGKILL, a lost login session, a power cut) leaves it, and the
next run stops with ``LockException``, whose advice ``--quiet all`` hides; after
``--unlock`` it stops again at ``IncompleteFilesException`` unless ``--rerun-incomplete``
is given (the slurm profile sets it). The Snakefile asks :func:`lock_hint` and
:func:`incomplete_hint` at start-up and prints the answers on stderr, naming the command
the user ran, so the next step is always on screen.

A local Snakemake runs each job as ``bash -c "dfil ..."``; when Snakemake is killed, the
jobs would run on, orphaned, and the rerun would start second writers of their run
directories. :func:`stop_with_snakemake` makes a ``dfil`` job stop when the local
Snakemake that started it is gone (cluster jobs, started by a ``--nolock`` Snakemake of
their own, are left to run).
"""

from __future__ import annotations

import base64
import os
import shlex
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import yaml

SNAKEMAKE_DIR = Path(".snakemake")
LOCKS = SNAKEMAKE_DIR / "locks"
INCOMPLETE = SNAKEMAKE_DIR / "incomplete"
# Invocations that take no lock (or remove it): they need no advice. Job steps on a
# cluster run with --nolock while the main run holds the lock.
NO_LOCK_FLAGS = frozenset({"--unlock", "--nolock", "--cleanup-metadata", "--cm",
                           "--list-rules", "-l", "--summary", "-S", "--detailed-summary",
                           "-D", "--lint", "--dag", "--rulegraph", "--filegraph", "--touch",
                           "-t"})
# A dry run runs no job, but Snakemake still refuses it while a lock is left.
DRY_RUN_FLAGS = frozenset({"-n", "--dry-run", "--dryrun"})
RERUN_INCOMPLETE = ("--rerun-incomplete", "--ri")


def flags(argv: list[str]) -> set[str]:
    """The options of ``argv``, with clusters of short flags split (``-np``: ``-n -p``)."""
    out = set()
    for arg in argv[1:]:
        if arg.startswith("--"):
            out.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and arg[1:].isalpha():
            out.update(f"-{c}" for c in arg[1:])
    return out


def takes_lock(argv: list[str]) -> bool:
    """Whether Snakemake started as ``argv`` locks the directory and runs jobs."""
    return not (NO_LOCK_FLAGS | DRY_RUN_FLAGS).intersection(flags(argv))


def checks_lock(argv: list[str]) -> bool:
    """Whether Snakemake started as ``argv`` stops at a lock left by a killed run (a dry
    run does, though it takes none)."""
    return not NO_LOCK_FLAGS.intersection(flags(argv))


def user_command(argv: list[str], *extra: str) -> str:
    """The command line the user ran (``snakemake ...``), with ``extra`` words added."""
    return shlex.join(["snakemake", *argv[1:], *extra])


def rerun_incomplete_set(argv: list[str], workdir: str | Path = ".") -> bool:
    """Whether ``--rerun-incomplete`` is on: given, or set by a ``--profile`` named on the
    command line (its ``config.yaml``)."""
    if flags(argv).intersection(RERUN_INCOMPLETE):
        return True
    for i, arg in enumerate(argv):
        name = arg.split("=", 1)[1] if arg.startswith("--profile=") else (
            argv[i + 1] if arg == "--profile" and i + 1 < len(argv) else None)
        path = Path(workdir) / str(name) / "config.yaml"
        if name and path.is_file():
            try:
                profile = yaml.safe_load(path.read_text()) or {}
            except (OSError, yaml.YAMLError):
                continue
            if any(profile.get(k) is True for k in ("rerun-incomplete", "ri")):
                return True
    return False


def lock_hint(workdir: str | Path, argv: list[str]) -> str | None:
    """The advice for a run started as ``argv`` in ``workdir``, or None if it needs none.

    Parameters
    ----------
    workdir : the Snakemake working directory (where ``.snakemake/`` lives).
    argv : the command line of this Snakemake process (``sys.argv``).
    """
    if not checks_lock(argv) or not _lock_files(Path(workdir)):
        return None
    others = other_snakemakes(Path(workdir))
    if others:
        return (f"dfil: another Snakemake (pid {', '.join(map(str, others))}) is running in "
                f"{workdir} and holds its lock: wait for it, or stop it (Ctrl-C, or kill "
                "<pid>) and start again.")
    unlock = [arg for arg in argv if arg not in DRY_RUN_FLAGS]  # --unlock does it
    rerun = user_command(argv, *(() if rerun_incomplete_set(argv, workdir)
                                 else ("--rerun-incomplete",)))
    return ("dfil: .snakemake/locks/ holds the lock of an earlier Snakemake run in this "
            "directory, and no Snakemake is running here now: the last run was killed "
            "before it could unlock. Remove the lock with "
            f"`{user_command(unlock, '--unlock')}`, then run `{rerun}`: finished jobs are "
            "kept, interrupted ones are rerun and interrupted training resumes from its "
            "checkpoint. If a Snakemake on another machine works in this directory, wait "
            "for it instead.")


def incomplete_files(workdir: str | Path) -> list[str]:
    """The outputs Snakemake marked incomplete (jobs running when it was killed) that
    still exist in ``workdir``."""
    root = Path(workdir) / INCOMPLETE
    found = []
    for marker in sorted(root.rglob("*")) if root.is_dir() else ():
        if not marker.is_file() or marker.name == "migration_underway":
            continue
        chunks = [p.removeprefix("@") for p in marker.relative_to(root).parts]
        try:
            path = base64.urlsafe_b64decode("".join(chunks)).decode()
        except (ValueError, UnicodeDecodeError):
            continue
        if (Path(workdir) / path).exists():
            found.append(path)
    return found


def incomplete_hint(workdir: str | Path, argv: list[str]) -> str | None:
    """One line when an interrupted run left incomplete files and this run would stop at
    ``IncompleteFilesException`` (no ``--rerun-incomplete``), naming the command to run."""
    if not takes_lock(argv) or rerun_incomplete_set(argv, workdir):
        return None
    files = incomplete_files(workdir)
    if not files:
        return None
    return (f"dfil: an interrupted Snakemake run left {len(files)} incomplete file(s) (e.g. "
            f"{files[0]}); Snakemake stops at them unless told to make them again: run "
            f"`{user_command(argv, '--rerun-incomplete')}` (interrupted training resumes "
            "from its checkpoint)")


def _lock_files(workdir: Path) -> list[Path]:
    locks = workdir / LOCKS
    return sorted(locks.glob("*.lock")) if locks.is_dir() else []


def other_snakemakes(workdir: Path) -> list[int]:
    """Pids of Snakemake processes on this machine working in ``workdir``, except this
    process and its ancestors (Linux /proc; an empty list elsewhere)."""
    mine = set(_ancestors(os.getpid()))
    target = workdir.resolve()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        pid = int(proc.name)
        if pid in mine:
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            cwd = Path(os.readlink(proc / "cwd"))
        except OSError:  # gone, or not ours to read
            continue
        if cwd == target and _is_snakemake(argv):
            found.append(pid)
    return sorted(found)


def _is_snakemake(argv: list[bytes]) -> bool:
    words = [os.path.basename(a.decode(errors="replace")) for a in argv[:3]]
    is_run = any(w == "snakemake" for w in words) or (
        len(argv) > 2 and argv[1] == b"-m" and argv[2] == b"snakemake")
    return is_run and b"--nolock" not in argv


def _ancestors(pid: int) -> list[int]:
    """``pid`` and its ancestors, nearest first."""
    seen: list[int] = []
    while pid > 1 and pid not in seen:
        seen.append(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return seen


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat``
    field 22): with the pid, it names one process even after pids are reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def snakemake_ancestor() -> int | None:
    """The local Snakemake run (one that holds the directory lock, not a cluster job's
    ``--nolock`` Snakemake) this process descends from, or None."""
    for pid in _ancestors(os.getppid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return None
        if _is_snakemake(argv):
            return pid
    return None


def stop_with_snakemake(say: Callable[[str], None], interval: float = 2.0,
                        pid: int | None = None) -> threading.Thread | None:
    """When this process was started by a local Snakemake (or by ``pid``), watch it from
    a daemon thread and send this process SIGTERM once it is gone: ``dfil train`` then
    saves its resume state and exits 143, ``dfil evaluate`` stops. None when there is
    nothing to watch."""
    pid = snakemake_ancestor() if pid is None else pid
    start = process_start(pid) if pid else None
    if start is None:
        return None

    def watch() -> None:
        while process_start(pid) == start:
            threading.Event().wait(interval)
        say(f"the Snakemake that started this job (pid {pid}) is gone: stopping")
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="stop-with-snakemake", daemon=True)
    thread.start()
    return thread

