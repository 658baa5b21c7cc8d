"""The stale marker, ``paper_tables/<grid>/stale.json``: which published files (tables,
the aggregate, the report) are from the last good build because a rebuild failed (pure).

The DAG writes every table and the aggregate to a staging area and publishes it only when
it was made (``workflow/rules/publish.smk``), so a failed rebuild never deletes the last
good one. When a Snakemake run fails, its ``onerror`` hook adds the files it was to
publish and did not to this marker; a later run that publishes them takes them out, and
the file is removed once nothing is stale. The report shows it (:mod:`dfil.render.stale`).

``{"format": "dfil-stale/1", "since": <ISO time of the first failed rebuild>,
"updated": <ISO time>, "log": <the Snakemake log of the last failure>,
"stale": [<published path>, ...]}``
"""

from __future__ import annotations

import datetime
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from dfil.util.atomic import atomic_write_json
from dfil.util.errors import RunFileError

FORMAT = "dfil-stale/1"
NAME = "stale.json"
KEYS = {"format": str, "since": str, "updated": str, "log": str, "stale": list}


def read_stale(path: str | Path) -> dict | None:
    """The marker at ``path`` (None if there is none); :class:`RunFileError` naming it if
    it breaks the contract."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RunFileError(f"{path}: unreadable stale marker ({err}); delete it, the next "
                           "build that fails writes it again") from None
    bad = [k for k, kind in KEYS.items() if not isinstance(record.get(k), kind)]
    if record.get("format") != FORMAT or bad or not all(
            isinstance(p, str) for p in record["stale"]):
        raise RunFileError(f"{path}: not a {FORMAT} marker (keys {bad or sorted(record)}); "
                           "delete it, the next build that fails writes it again")
    return record


def read_or_set_aside(path: Path) -> dict | None:
    """The marker at ``path``; one that cannot be read is moved aside to
    ``<name>.unreadable`` with one line saying so, and counts as none: this run's marker
    replaces it (every file a run was to publish is marked or cleared by the run)."""
    try:
        return read_stale(path)
    except RunFileError as err:
        aside = path.with_name(path.name + ".unreadable")
        path.replace(aside)
        print(f"dfil: {err.args[0].split(';')[0]}; moved to {aside}, this run's marker "
              "replaces it", file=sys.stderr)
        return None


def published_before(paths: Iterable[str | Path]) -> set[str]:
    """Of ``paths`` (files a run was to publish and did not), those an earlier build
    published: the ones present. A file no build has published yet is missing, not
    stale, and the marker never names it."""
    return {str(p) for p in paths if Path(p).is_file()}


def stale_note(unpublished: int, marker: dict | None) -> str:
    """What a failed run says of the files it did not publish (``unpublished`` of them):
    how many published files are from the last good build (``marker``: the updated
    marker), or that no earlier build published any."""
    head = f"dfil: the rebuild failed before publishing {unpublished} file(s); "
    if not marker:
        return head + "no earlier build published them, so none is marked stale"
    return head + (f"{len(marker['stale'])} published file(s) are from the last good build "
                   "and marked stale")


def update_stale(path: str | Path, failed: Iterable[str], published: Iterable[str],
                 log: str | None = None, now: datetime.datetime | None = None) -> dict | None:
    """Mark ``failed`` stale and ``published`` fresh in the marker at ``path``; write it,
    or remove it when nothing is stale. Returns the marker (None: nothing stale).

    Parameters
    ----------
    failed : published files a run was to rebuild and did not (it failed first): only
        those an earlier build published (:func:`published_before`).
    published : published files a run has just rebuilt, or found up to date.
    log : the Snakemake log of the failed run. A run that failed nothing leaves the
        marker's time and log those of the last failure.
    """
    path, failed = Path(path), set(failed)
    old = read_or_set_aside(path)
    stale = (set(old["stale"]) if old else set()) | failed
    stale -= set(published)
    if not stale:
        path.unlink(missing_ok=True)
        return None
    stamp = (now or datetime.datetime.now().astimezone()).isoformat(timespec="seconds")
    if old and not failed:  # a run that failed nothing is not the failure the marker names
        stamp, log = old["updated"], old["log"]
    record = {"format": FORMAT, "since": old["since"] if old else stamp, "updated": stamp,
              "log": str(log or (old or {}).get("log", "")), "stale": sorted(stale)}
    atomic_write_json(path, record)
    return record
