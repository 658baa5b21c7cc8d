"""A run directory whose outputs belong to another run: moved aside, never mixed.

A run directory's model, ``cell.yaml``, config hash and the inputs it trained on must
always agree. When a cell is trained into a directory whose training outputs were made
for a different resolved config (an edited grid reruns the cell, or ``dfil train --cell
other.yaml`` reuses a directory) or from other inputs (data made again from another seed,
another backbone's weights: their sha256 differ from the record's,
:mod:`dfil.contracts.identity`), those outputs are moved to ``superseded/<old hash>/``
inside it, nothing deleted, and the cell trains afresh from a clean state.
"""

from __future__ import annotations

from pathlib import Path

from dfil.contracts.failure import is_failure
from dfil.contracts.identity import KEY
from dfil.contracts.rundir import (
    ATTEMPTS,
    EVALUATION_OUTPUTS,
    RESUME,
    SUMMARY,
    SUPERSEDED,
    TRAINING_OUTPUTS,
    read_run_json,
)
from dfil.train.resume import written_record

_REMEDY = ("it says which config the directory's outputs were made for: move the damaged "
           "file aside (the Snakemake target does, naming it) and rerun")
#: Everything training and evaluation write besides cell.yaml.
OUTPUTS = (*TRAINING_OUTPUTS, *EVALUATION_OUTPUTS)


def trained_record(run_dir: Path) -> dict | None:
    """The identity record (:mod:`dfil.contracts.identity`) of the directory's training
    outputs, or only their config hash where they record none; None if it has none. Read
    from the summary (a failure record is no training output), else the first attempt,
    else the resume state."""
    summary = run_dir / SUMMARY
    if summary.is_file():
        record = read_run_json(summary, _REMEDY)
        if not is_failure(record):
            return record.get(KEY) or {"config_hash": record.get("config_hash")}
    attempts = run_dir / ATTEMPTS
    if attempts.is_file():
        done = read_run_json(attempts, _REMEDY)
        records = [a.get(KEY) or {"config_hash": a.get("config_hash")} for a in done]
        if records and all(r == records[0] for r in records):
            return records[0]
        return {"config_hash": "unknown"}
    return written_record(run_dir / RESUME)


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
