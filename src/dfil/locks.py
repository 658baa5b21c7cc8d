"""What to do about Snakemake's directory lock when a killed run left it behind.

A Snakemake run locks the working directory (``.snakemake/locks/``) and removes the lock
when it ends; a hard kill (SIGKILL, a lost login session, a power cut) leaves it, and the
next run stops with ``LockException``, whose advice ``--quiet all`` hides. The Snakefile
asks :func:`lock_hint` at start-up and prints the answer on stderr, so the next step is
always on screen: unlock and rerun, or wait for the run that really holds the lock.
"""

from __future__ import annotations

import os
from pathlib import Path

LOCKS = Path(".snakemake") / "locks"
# Invocations that take no lock (or remove it): they need no advice. Job steps on a
# cluster run with --nolock while the main run holds the lock.
NO_LOCK_FLAGS = frozenset({"--unlock", "-n", "--dry-run", "--dryrun", "--nolock",
                           "--cleanup-metadata", "--cm", "--list-rules", "-l", "--summary",
                           "-S", "--detailed-summary", "-D", "--lint", "--dag",
                           "--rulegraph", "--filegraph"})


def lock_hint(workdir: str | Path, argv: list[str]) -> str | None:
    """The advice for a run started as ``argv`` in ``workdir``, or None if it needs none.

    Parameters
    ----------
    workdir : the Snakemake working directory (where ``.snakemake/`` lives).
    argv : the command line of this Snakemake process (``sys.argv``).
    """
    if NO_LOCK_FLAGS.intersection(argv) or not _lock_files(Path(workdir)):
        return None
    others = other_snakemakes(Path(workdir))
    if others:
        return (f"dfil: another Snakemake (pid {', '.join(map(str, others))}) is running in "
                f"{workdir} and holds its lock: wait for it, or stop it (Ctrl-C, or kill "
                "<pid>) and start again.")
    return ("dfil: .snakemake/locks/ holds the lock of an earlier Snakemake run in this "
            "directory, and no Snakemake is running here now: the last run was killed "
            "before it could unlock. Remove the lock by running the same command with "
            "--unlock added (e.g. `snakemake all_tables --profile slurm --unlock`), then "
            "run the command again: finished jobs are kept, interrupted ones are rerun "
            "(--rerun-incomplete) and interrupted training resumes from its checkpoint. "
            "If a Snakemake on another machine works in this directory, wait for it "
            "instead.")


def _lock_files(workdir: Path) -> list[Path]:
    locks = workdir / LOCKS
    return sorted(locks.glob("*.lock")) if locks.is_dir() else []


def other_snakemakes(workdir: Path) -> list[int]:
    """Pids of Snakemake processes on this machine working in ``workdir``, except this
    process and its ancestors (Linux /proc; an empty list elsewhere)."""
    mine = _ancestors(os.getpid())
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


def _ancestors(pid: int) -> set[int]:
    seen = set()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return seen
