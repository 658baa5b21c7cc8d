"""The contract of a failure record: what a cell's ``train_summary.json`` and
``metrics.json`` hold when its job gave up on its last try (pure: json, jsonschema).

With Snakemake's keep-going, a failed job would leave its cell without outputs and every
table that reads the cell unbuilt. So a training or evaluation job told it is Snakemake's
last attempt (``dfil train --attempt N``, with ``DFIL_LAST_ATTEMPT`` the attempt the
workflow makes last), or one whose failure a retry would repeat (:data:`DETERMINISTIC`,
on any attempt), does not fail: it writes this record in place of its output and exits 0.
The evaluation of a failed training copies it into ``metrics.json`` (asking for no GPU);
the aggregate turns it into a ``failed.<reason>`` row; the tables print no number for
the entries that read the cell, and their notes say why in the words of :data:`NOT_RUN`;
``dfil grid status`` lists it with its reason (or, for a deterministic failure, its
message: where, and what to change) and log. Rerunning a
failed cell is asking for it again (``--forcerun`` its ``train_summary.json``): training
resumes from its saved state. A hub fetch that a gated repo refused is recorded, with
keep-going, in the fetch rule's stamp (the job exits 0): each cell that reads the repo
then records itself as ``gated`` (:data:`GATED`); other fetch failures stop the cells
that need them. A job that will only record a failure (:func:`failure_ahead`: a gated
stamp or a failed training among its inputs) asks for no GPU. A job that SLURM's sbatch
refused (not for a queue limit) is recorded as ``refused`` by a small job sent in its
place (:mod:`dfil.cluster.submit`); the next run moves that record aside and submits the
job again (:mod:`dfil.preflight.refused`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from functools import cache
from pathlib import Path

from dfil import __version__
from dfil.contracts import packaged_schema, schema_problem
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import MetricsError

KEY = "failed"
REASONS = ("OOM", "TIMEOUT", "non-finite loss", "gated", "refused", "error")
#: Reasons that a rerun of the same config repeats, recorded on the job's first attempt
#: (no retry): their message says where and what to change, and ``dfil grid status``
#: shows it in place of the reason.
DETERMINISTIC = ("non-finite loss", "gated")
#: Reasons whose message ``dfil grid status`` shows in place of the reason: the
#: deterministic ones, and a refused submission (sbatch's words).
WORDED = (*DETERMINISTIC, "refused")
#: The key of a hub fetch rule's stamp that holds the hub's refusal of a gated repo
#: (written with keep-going in place of the fetch's record; ``dfil hub fetch --stamp``).
REFUSED = "gated"
#: The key of a frozen_features stamp written in place of a job SLURM's sbatch refused
#: (``dfil refused --stamp``): sbatch's words; the cells that read it record ``refused``.
SBATCH_REFUSED = "sbatch_refused"
#: How a gated cell's record begins: the cell did not run, and what it needs.
GATED = "not run: gated (needs HF_TOKEN and the licence)"
#: What a table's notes say where a failed cell's entries would be, by reason.
NOT_RUN = {"OOM": "not run: out of GPU memory (OOM)",
           "TIMEOUT": "not run: out of time (TIMEOUT)",
           "non-finite loss": "not run: non-finite loss",
           "gated": GATED,
           "refused": "not run: the cluster refused its job (sbatch's words in its failure "
                      "record)",
           "error": "not run: failed (its failure record says why)"}


def failure_words(reason: str) -> str:
    """The words a table prints for a cell that failed by ``reason`` (one of
    :data:`REASONS`; an unknown one reads as ``error``)."""
    return NOT_RUN.get(reason, NOT_RUN["error"])


@cache
def schema() -> dict:
    return packaged_schema("failure.schema.json")


def is_failure(record: Mapping) -> bool:
    """Whether a train summary or metrics record is a failure record."""
    return isinstance(record, Mapping) and KEY in record


def read_record(path: str | Path):
    """The JSON file at ``path`` as read; None when it is absent or does not read (a run
    file or stamp that a job has not written yet, or wrote in part)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def failure_ahead(paths: Iterable[str | Path]) -> str | None:
    """The reason a job whose inputs are ``paths`` will only record a failure, or None.

    Among the JSON files of ``paths`` that exist: a hub fetch stamp holding a refusal
    (key :data:`REFUSED`) gives ``gated`` (the job records :data:`GATED`), a frozen-feature
    stamp written for a refused job (:data:`SBATCH_REFUSED`) ``refused``, a failure
    record (a failed training's summary) its own reason (the evaluation copies it). The
    first such file in ``paths``' order decides. Absent files (a dry run, or a job not yet
    ready) and unreadable ones give no reason: the job asks for what it would ask anyway.
    """
    for path in map(Path, paths):
        if path.suffix != ".json":
            continue
        record = read_record(path)
        if isinstance(record, Mapping) and record.get(REFUSED):
            return "gated"
        if isinstance(record, Mapping) and record.get(SBATCH_REFUSED):
            return "refused"
        if is_failure(record) and isinstance(record[KEY], Mapping):
            return str(record[KEY].get("reason", "error"))
    return None


def refused_stamp(paths: Iterable[str | Path]) -> str | None:
    """sbatch's words in the first of the frozen-feature stamps ``paths`` that was written
    for a refused job (:data:`SBATCH_REFUSED`), or None."""
    for path in paths:
        record = read_record(path)
        if isinstance(record, Mapping) and record.get(SBATCH_REFUSED):
            return str(record[SBATCH_REFUSED])
    return None


def failure_record(cell: str, config_hash: str, failed: Mapping) -> dict:
    """A failure record (validated): ``failed`` holds reason, stage, message (made one
    line), log and attempt; the time and SLURM's job id (if any) are added."""
    from dfil.util.commit import git_commit

    record = {"cell": cell, "config_hash": config_hash,
              KEY: {**failed, "message": " ".join(str(failed.get("message", "")).split()),
                    "job_id": os.environ.get("SLURM_JOB_ID"),
                    "time": datetime.now(timezone.utc).isoformat(timespec="seconds")},
              "provenance": {"package_version": __version__, "git_commit": git_commit()}}
    validate_failure(record, "failure record")
    return record


def validate_failure(record: Mapping, where: str) -> None:
    """:class:`MetricsError` naming ``where`` and the key if ``record`` breaks the schema."""
    problem = schema_problem(schema(), record)
    if problem is not None:
        raise MetricsError(f"{where}: failure record {problem}")


def write_failure(path: str | Path, record: Mapping) -> None:
    validate_failure(record, str(path))
    atomic_write_json(path, dict(record))
