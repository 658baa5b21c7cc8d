"""The sha256 stamp of a directory of files the pipeline makes: written once, by the step
that makes the files (the embedded backbone's conversion, the synthetic FRoG stand-in),
beside them, and copied from there into every run's provenance, so no job hashes weights
again. (A hub fetch keeps its digests in its own stamp, :mod:`dfil.hub.store`; the probe
sets in their ``manifest.json``.)

``<dir>/dfil-sha256.json``: ``{"format": "dfil-sha256/1", "made_by": <what made the
files>, "sha256": {<path relative to dir>: <hex digest>}, "sizes": {<path>: <bytes>}}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from dfil.hub.verify import digests
from dfil.util.atomic import atomic_write_json

NAME = "dfil-sha256.json"
FORMAT = "dfil-sha256/1"


def sha256_of(path: str | Path) -> str:
    """The sha256 of the file at ``path`` (read in 1 MiB blocks)."""
    return digests(Path(path), git_blob=False)[0]


def stamped_files(root: Path) -> list[Path]:
    """Every file below ``root`` that its stamp covers (all but the stamp), sorted."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != NAME)


def write_dir_stamp(root: str | Path, made_by: str,
                    known: dict[str, str] | None = None) -> dict:
    """Stamp every file below ``root``: its sha256 (taken from ``known``, file name ->
    digest, where the maker already has it; computed here otherwise) and size. Returns
    the stamp."""
    root = Path(root)
    known = known or {}
    files = {p.relative_to(root).as_posix(): p for p in stamped_files(root)}
    record = {"format": FORMAT, "made_by": made_by,
              "sha256": {rel: known.get(rel) or sha256_of(p) for rel, p in files.items()},
              "sizes": {rel: p.stat().st_size for rel, p in files.items()}}
    atomic_write_json(root / NAME, record)
    return record


def read_dir_stamp(root: str | Path) -> dict | None:
    """The stamp of directory ``root``; None where it has none or it is not one (an
    unreadable stamp is no stamp: the reader says the digests are missing)."""
    path = Path(root) / NAME
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    ok = record.get("format") == FORMAT and isinstance(record.get("sha256"), dict)
    return record if ok else None
