"""Frozen-feature stamps whose cache files are gone (the cache emptied or moved since).

A ``frozen_features`` job's stamp (``results/<grid>/features/<group>/<items>.json``)
lists the cache files it made (:func:`dfil.engine.features.cache_item_set`); the cells
read them under ``$DFIL_CACHE``, outside ``results/``. A stamp whose files are gone is
removed before the DAG is built, so a cell that runs again has its features computed
again first, instead of stopping at the missing cache entry; a finished cell is not run
again for it (the cells take the stamps as ``ancient`` inputs).
"""

from __future__ import annotations

import json
from pathlib import Path


def missing_file(stamp: Path) -> str | None:
    """The first cache file ``stamp`` lists that is not there (or why the stamp cannot
    say), None when every one is."""
    try:
        files = json.loads(stamp.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return "its record does not read"
    for name in files:
        if not Path(name).is_absolute():
            return f"{name} (a record without the cache's path)"
        if not Path(name).is_file():
            return name
    return None


def stale_stamps(features: Path, apply: bool) -> list[str]:
    """One line per stamp under ``features`` whose cache files are gone, each removed
    when ``apply`` (a run that takes Snakemake's lock)."""
    notes = []
    for stamp in sorted(features.glob("*/*.json")) if features.is_dir() else ():
        gone = missing_file(stamp)
        if gone is None:
            continue
        if apply:
            stamp.unlink(missing_ok=True)
        notes.append(f"dfil: {stamp}: its frozen features are not in the cache ({gone}); "
                     + ("removed, so a cell that runs again has them computed first"
                        if apply else "a run that builds the DAG removes it"))
    return notes
