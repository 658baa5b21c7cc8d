"""A run directory whose outputs belong to another config: moved aside, never mixed.

A run directory's model, ``cell.yaml`` and config hash must always agree. When a cell is
trained into a directory whose training outputs were made for a different resolved config
(an edited grid reruns the cell, or ``dfil train --cell other.yaml`` reuses a directory),
those outputs are moved to ``superseded/<old hash>/`` inside it, nothing deleted, and the
cell trains afresh from a clean state.
"""

from __future__ import annotations

from pathlib import Path

from dfil.contracts.rundir import (
    ATTEMPTS,
    EVALUATION_OUTPUTS,
    RESUME,
    SUMMARY,
    SUPERSEDED,
    TRAINING_OUTPUTS,
    read_run_json,
)
from dfil.train.resume import written_for

_REMEDY = ("it says which config the directory's outputs were made for: move the damaged "
           "file aside (the Snakemake target does, naming it) and rerun")
#: Everything training and evaluation write besides cell.yaml.
OUTPUTS = (*TRAINING_OUTPUTS, *EVALUATION_OUTPUTS)


def trained_for(run_dir: Path) -> str | None:
    """The config hash the directory's training outputs were made for; None if it has
    none. Read from the summary, else the attempts, else the resume state."""
    summary = run_dir / SUMMARY
    if summary.is_file():
        return read_run_json(summary, _REMEDY).get("config_hash")
    attempts = run_dir / ATTEMPTS
    if attempts.is_file():
        hashes = {a.get("config_hash") for a in read_run_json(attempts, _REMEDY)}
        # attempts written before hashes were recorded belong to an unknown config
        return hashes.pop() if len(hashes) == 1 and None not in hashes else "unknown"
    return written_for(run_dir / RESUME)


def supersede(run_dir: Path, old_hash: str) -> Path:
    """Move the directory's outputs to ``superseded/<old_hash>/``; returns that folder."""
    target = run_dir / SUPERSEDED / old_hash
    n = 1
    while target.exists():
        n += 1
        target = run_dir / SUPERSEDED / f"{old_hash}.{n}"
    target.mkdir(parents=True)
    for name in OUTPUTS:
        if (run_dir / name).exists():
            (run_dir / name).rename(target / name)
    return target
