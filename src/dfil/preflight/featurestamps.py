"""Frozen-feature stamps whose cache files are gone (the cache emptied or moved since) or
damaged (cut short, or a header that does not read).

A ``frozen_features`` job's stamp (``results/<grid>/features/<group>/<items>.json``)
lists the cache files it made (:func:`dfil.engine.features.cache_item_set`); the cells
read them under ``$DFIL_CACHE``, outside ``results/``. A stamp whose files are gone or
damaged is removed (with the damaged file) before the DAG is built, so a cell that runs
again has its features computed again first, instead of stopping at the cache entry; a
finished cell is not run again for it (the cells take the stamps as ``ancient`` inputs).
A stamp written in place of a job SLURM refused (:data:`dfil.contracts.failure.
SBATCH_REFUSED`) is removed likewise, so the job is submitted again.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from dfil.contracts.failure import refused_stamp


def safetensors_damage(path: Path) -> str | None:
    """Why the safetensors file at ``path`` is damaged, from its header alone (its 8-byte
    length, the JSON header, and the size its tensors' offsets add up to), or None when
    it is whole. Reads the header, never the tensors."""
    size = path.stat().st_size
    try:
        with path.open("rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            if length > size - 8:
                return f"its header claims {length} bytes, the file has {size}"
            header = json.loads(fh.read(length))
        ends = [int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"]
    except (struct.error, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        return f"its header does not read ({type(err).__name__})"
    want = 8 + length + max(ends, default=0)
    return None if size == want else f"{size} bytes where its header needs {want}"


def missing_file(stamp: Path) -> str | None:
    """The first cache file ``stamp`` lists that is not there or is damaged (or why the
    stamp cannot say), None when every one is there and whole."""
    problem = _problem(stamp)
    return problem[0] if problem else None


def _problem(stamp: Path) -> tuple[str, str | None] | None:
    """(the file or what is wrong with the record, why the file is damaged or None when
    it is gone), or None when every file is there and whole."""
    try:
        files = json.loads(stamp.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return "its record does not read", None
    for name in files:
        if not Path(name).is_absolute():
            return f"{name} (a record without the cache's path)", None
        if not Path(name).is_file():
            return name, None
        if why := safetensors_damage(Path(name)):
            return name, why
    return None


def stale_stamps(features: Path, apply: bool) -> list[str]:
    """One line per stamp under ``features`` whose cache files are gone or damaged, each
    removed when ``apply`` (a run that takes Snakemake's lock), with the damaged file."""
    notes = []
    for stamp in sorted(features.glob("*/*.json")) if features.is_dir() else ():
        if words := refused_stamp([stamp]):
            if apply:
                stamp.unlink(missing_ok=True)
            notes.append(f"dfil: {stamp}: its frozen_features job was refused last time "
                         f"({words}); " + ("submitting it again" if apply else
                                           "a run that builds the DAG submits it again"))
            continue
        problem = _problem(stamp)
        if problem is None:
            continue
        name, why = problem
        if apply:
            stamp.unlink(missing_ok=True)
            if why:
                Path(name).unlink(missing_ok=True)
        said = (f"its frozen features are not in the cache ({name})" if why is None else
                f"its frozen-feature file {name} is damaged ({why})")
        notes.append(f"dfil: {stamp}: {said}; "
                     + ("removed, so a cell that runs again has them computed first"
                        if apply else "a run that builds the DAG removes it"))
    return notes
