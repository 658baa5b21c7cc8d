"""Before the real run: is every hub backbone and dataset of the grid locked, already
fetched or reachable at its revision, and does the cache have room for what is left to
download.

Per repo the cheapest answer wins: a repo already fetched at its locked commit (its stamp
and files intact, :func:`dfil.hub.store.stamp_problem`) needs no network at all; any other
is asked of the hub (:func:`dfil.hub.probe.probe`: ``HF_ENDPOINT``, the token of
``HF_TOKEN`` or ``hf auth login``), which also gives the bytes its fetch downloads. The
branches the lock file does not pin are one problem of their own, naming ``dfil grid
lock``; each is still asked of the hub at the branch, so one preflight shows every
problem.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from dfil.cluster.checks import Check
from dfil.config.pins import Pin, unlocked_error
from dfil.hub.errors import Target
from dfil.hub.probe import RemoteFile, missing_bytes, probe
from dfil.hub.store import stamp_problem
from dfil.util.errors import HubError

#: Free space kept beyond the downloads (the prepared parquet splits, logs, the rest of
#: the filesystem's users): the check asks for the downloads x this factor.
DISK_MARGIN = 1.1
CACHE_FIX = ("free space there, or point DFIL_HUB_CACHE at a filesystem with room that "
             "every node sees (docs/cluster.md, Running on your cluster, step 3)")

Probe = Callable[[Target], tuple[str, list[RemoteFile]]]


def size(n: float) -> str:
    """Bytes as the decimal unit a disk is sold in: 1.5 GB, 340 MB, 12 kB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def pin_check(pin: Pin, commit: str | None, cache: Path, endpoint: str | None = None,
              ask: Probe = probe) -> tuple[Check, int]:
    """One repo's hub check and the bytes its fetch would still write into ``cache``
    (its downloads, and for a dataset its splits prepared as parquet, about its size)."""
    if commit and stamp_problem(cache, pin.kind, pin.repo, commit) is None:
        return Check("hub", "ok", f"{_name(pin)} at {commit[:12]}: already fetched into "
                     f"{cache}, nothing to download"), 0
    target = Target(pin.kind, pin.repo, commit or pin.revision, pin.label, endpoint)
    try:
        resolved, files = ask(target)
    except HubError as err:
        return Check("hub", "problem", " ".join(str(err).split())), 0
    need = missing_bytes(cache, target, resolved, files)
    if pin.kind == "dataset":
        need += sum(f.size for f in files)
    at = f"{pin.revision!r} (now {resolved[:12]})" if commit is None else resolved[:12]
    return Check("hub", "ok", f"{_name(pin)} at {at}: reachable, {len(files)} files, "
                 f"{size(need)} to fetch"), need


def _name(pin: Pin) -> str:
    what = "backbone" if pin.kind == "model" else "dataset"
    return f"{what} {pin.label} ({pin.repo})"


def hub_checks(pins: list[tuple[Pin, str | None]], cache: Path, lock: str, files: str,
               endpoint: str | None = None, ask: Probe = probe) -> tuple[list[Check], int]:
    """The hub check of every ``(pin, locked commit or None)`` of a grid whose lock file
    is ``lock`` (read from the grid files ``files``), after one lock check naming the
    branches it does not pin; and the bytes left to fetch."""
    ordered = sorted(pins, key=lambda pc: (pc[0].kind, pc[0].label))
    unlocked = [pin for pin, commit in ordered if commit is None]
    checks = [Check("lock", "problem", " ".join(str(unlocked_error(unlocked, lock, files))
                                                .split()))] if unlocked else []
    total = 0
    for pin, commit in ordered:
        check, need = pin_check(pin, commit, cache, endpoint, ask)
        checks.append(check)
        total += need
    return checks, total


def judge_disk(free: int, need: int, where: Path, complete: bool = True) -> Check:
    """Room in the cache's filesystem (``free`` bytes at ``where``) for ``need`` bytes of
    fetches (``complete`` False: some repos did not answer, so at least that much)."""
    want = int(need * DISK_MARGIN)
    if not complete and not need:
        return Check("disk", "skipped", f"{size(free)} free at {where}; no repo to fetch "
                     "answered, so what the fetches need is not known")
    least = "" if complete else "at least "
    text = (f"{size(free)} free at {where}; the fetches need {least}{size(need)} "
            f"(x{DISK_MARGIN} kept: {size(want)})")
    if free >= want:
        return Check("disk", "ok", text)
    return Check("disk", "problem", f"{text}: {CACHE_FIX}")


def disk_check(cache: Path, need: int, complete: bool = True) -> Check:
    """:func:`judge_disk` on the filesystem that holds (or will hold) ``cache``."""
    where = Path(cache).absolute()
    while not where.exists() and where != where.parent:
        where = where.parent
    return judge_disk(shutil.disk_usage(where).free, need, Path(cache), complete)
