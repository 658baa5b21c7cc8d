"""A grid's revision pins: the commit each branch or tag its hub backbones and datasets
name, kept in the grid's lock file (pure Python).

A grid pins every hub repo it reads by a ``revision``. A full commit (40 hex digits) is
taken as it is; a branch or tag (``main``, ``refs/convert/parquet``) is looked up in the
grid's lock file, which ``dfil grid lock`` writes from the hub once and the user commits,
as with any lock file. Every fetch and every cell's config hash then use the locked
commit, so a branch that moves on the hub changes nothing until the lock is renewed
(``dfil grid lock --update`` renews every entry, ``--update NAME`` the entries of one
backbone or dataset, named as the grid names it or by its hub id). Layout::

    models:
      Qwen/Qwen2.5-7B: {main: 0123...}        # repo -> revision -> commit
    datasets:
      GAIR/FRoG: {main: 4567...}
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from dfil.config.yamlfile import load_yaml
from dfil.util.atomic import atomic_write_text
from dfil.util.errors import ConfigError, did_you_mean

COMMIT = re.compile(r"[0-9a-f]{40}")
KINDS = ("model", "dataset")
HEADER = """\
# Lock file of {grid}: the commit each branch or tag of its hub backbones and datasets
# named when `dfil grid lock` asked the hub ({when}). Commit it with the grid: every fetch
# and every cell's config hash use these commits. `dfil grid lock --update` renews them,
# `--update NAME` one backbone's or dataset's (every cell whose commit changes is retrained).
"""


@dataclass(frozen=True)
class Pin:
    """A hub repo at a revision, as the grid names it: ``kind`` model or dataset, ``label``
    the grid's name for it (backbone or dataset entry), ``where`` its dotted key."""

    kind: str
    label: str
    repo: str
    revision: str
    where: str

    @property
    def pinned(self) -> bool:
        """Whether the revision is a commit already (no lock entry needed)."""
        return bool(COMMIT.fullmatch(self.revision))


def is_commit(revision: str) -> bool:
    return bool(COMMIT.fullmatch(revision))


def read_lock(path: str | Path) -> dict[tuple[str, str, str], str]:
    """``(kind, repo, revision) -> commit`` from the lock file at ``path`` ({} if there is
    none); :class:`ConfigError` naming the file and key for a malformed one."""
    path = Path(path)
    if not path.is_file():
        return {}
    data = load_yaml(path) or {}
    if not isinstance(data, Mapping) or set(data) - {"models", "datasets"}:
        raise ConfigError(f"{path}: a lock file holds the sections models and datasets only")
    out = {}
    for section, repos in data.items():
        for repo, revisions in (repos or {}).items():
            if not isinstance(revisions, Mapping):
                raise ConfigError(f"{path}: {section}.{repo}: expected revision: commit pairs")
            for revision, commit in revisions.items():
                if not isinstance(commit, str) or not is_commit(commit):
                    raise ConfigError(f"{path}: {section}.{repo}.{revision}: expected a commit "
                                      f"of 40 hex digits, got {commit!r}")
                out[(section[:-1], repo, str(revision))] = commit
    return out


def write_lock(path: str | Path, commits: Mapping[tuple[str, str, str], str], grid: str,
               when: str) -> Path:
    """Write ``(kind, repo, revision) -> commit`` to ``path`` atomically, sorted."""
    data: dict = {}
    for (kind, repo, revision), commit in sorted(commits.items()):
        data.setdefault(f"{kind}s", {}).setdefault(repo, {})[revision] = commit
    text = HEADER.format(grid=grid, when=when) + yaml.safe_dump(data, sort_keys=True)
    atomic_write_text(path, text)
    return Path(path)


def unlocked_error(pins: list[Pin], lock: str, files: str) -> ConfigError:
    """The error of a grid whose branches have no commit in its lock file."""
    first = pins[0]
    where = (f"{lock} has no commit for them" if lock and Path(lock).is_file()
             else f"its lock file {lock} does not exist" if lock
             else "the grid names no lock file (key lock:)")
    names = ", ".join(f"{p.where}: {p.repo} at {p.revision!r}" for p in pins[:4])
    more = f" and {len(pins) - 4} more" if len(pins) > 4 else ""
    return ConfigError(
        f"{first.where}: {first.revision!r} is a branch or tag, not a commit, and {where} "
        f"({names}{more}). Run `dfil grid lock --config {files}` where the hub is reachable "
        f"and commit {lock or 'the lock file'}; nothing is trained from a revision that can move")


def unlocked_note(pins: list[Pin], lock: str, files: str) -> str:
    """The one line a dry run prints for a grid whose branches are not locked yet."""
    names = ", ".join(f"{p.repo}@{p.revision}" for p in pins[:3])
    more = f" and {len(pins) - 3} more" if len(pins) > 3 else ""
    return (f"dfil: note: {len(pins)} hub revision(s) of {files} are branches or tags "
            f"without a commit in {lock or 'a lock file'} ({names}{more}): this plan shows "
            f"them as named, and a real run is refused until `dfil grid lock --config "
            f"{files}` writes their commits")


def named_pins(pins: list[Pin], names: Collection[str], files: str) -> list[Pin]:
    """The pins that ``names`` (grid entry names or hub ids) name, for renewing them alone;
    :class:`ConfigError` naming ``files`` for a name that is no hub entry of the grid, or
    the entry of a commit (nothing to renew)."""
    chosen = []
    for name in names:
        hits = [p for p in pins if name in (p.label, p.repo)]
        if not hits:
            known = sorted({p.label for p in pins})
            hint = did_you_mean(name, known + sorted({p.repo for p in pins}), n=3, cutoff=0.5)
            raise ConfigError(f"{files}: no hub backbone or dataset named {name!r} to renew "
                              f"({hint}its entries: {', '.join(known) or 'none'})")
        for pin in hits:
            if pin.pinned:
                raise ConfigError(f"{files}: {pin.where} names commit {pin.revision}, not a "
                                  "branch or tag: there is no lock entry to renew; edit the "
                                  "revision there")
        chosen += hits
    return chosen


def lock_pins(pins: list[Pin], path: str | Path, grid: str,
              update: bool | Collection[Pin] = False,
              endpoint: str | None = None) -> list[str]:
    """Resolve every branch or tag of ``pins`` to its commit on the hub and write the lock
    file ``path``; returns one line per pin saying what it is locked to. Entries already
    locked are kept, except every one when ``update`` is True, or those of the pins
    ``update`` lists (:func:`named_pins`). Entries no pin uses are dropped."""
    from datetime import datetime, timezone

    from dfil.hub import resolve_revision

    old = read_lock(path)
    renew = {(p.kind, p.repo, p.revision) for p in (pins if update is True else update or ())}
    commits, lines = {}, []
    for pin in sorted(pins, key=lambda p: (p.kind, p.label)):
        if pin.pinned:
            lines.append(f"{pin.kind} {pin.label} ({pin.repo}): {pin.revision} (a commit)")
            continue
        key = (pin.kind, pin.repo, pin.revision)
        kept = key in old and key not in renew
        commits[key] = old[key] if kept else resolve_revision(
            pin.repo, pin.revision, kind=pin.kind, label=pin.label, endpoint=endpoint)
        lines.append(f"{pin.kind} {pin.label} ({pin.repo}): {pin.revision} -> "
                     f"{commits[key]}" + (" (kept)" if kept else ""))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    write_lock(path, commits, grid, when)
    return lines
