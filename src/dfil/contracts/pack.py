"""The contract of a pack record (pure: json, jsonschema): what a ``train_pack`` job did
with one configuration's seeds (``results/<grid>/packs/<pack>.json``, schema
``pack.schema.json``).

The workflow's ``train_pack`` job trains attempt 1 of a configuration's seeds together
(:func:`dfil.train.driver.train_together`) and writes this record; each seed's
``train_cell`` job runs after it: a seed the record lists as finished needs only its
summary copied (:func:`pack_summary`; :func:`dfil.train.sealed.sealed_summary` decides,
and that job then asks for no GPU); any other seed trains alone, from its run
directory's state. A pack
that gives up on its last attempt, or that sbatch refused, says why (``gave_up``) and
lists no run as trained together.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

from dfil.contracts import packaged_schema, schema_problem
from dfil.contracts.failure import read_record
from dfil.contracts.rundir import ATTEMPTS, BEST
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import MetricsError

FORMAT = "dfil-pack/1"


@cache
def _schema() -> dict:
    return packaged_schema("pack.schema.json")


def pack_record(runs: Sequence[str], together: Iterable[str] = (),
                finished: Iterable[str] = (), gave_up: Mapping | None = None,
                summaries: Mapping[str, Mapping] | None = None) -> dict:
    """A pack record (validated): its ``runs``, those it trained ``together``, those
    ``finished`` with their ``summaries`` (by run), and why it ``gave_up`` (reason,
    message), if it did."""
    record = {"format": FORMAT, "runs": list(runs), "together": list(together),
              "finished": list(finished)}
    if summaries:
        if stray := sorted(set(summaries) - set(record["finished"])):
            raise MetricsError(f"pack record: a summary for a run not finished: {stray}")
        record["summaries"] = {run: dict(summary) for run, summary in summaries.items()}
    if gave_up is not None:
        record["gave_up"] = {"reason": gave_up["reason"],
                             "message": " ".join(str(gave_up["message"]).split())}
    if problem := schema_problem(_schema(), record):
        raise MetricsError(f"pack record: {problem}")
    return record


def sealable(summary: Mapping, run: str | Path) -> dict:
    """``summary`` (run directory ``run``'s), as a pack record holds it; a
    :class:`MetricsError` naming the run where the record's schema refuses it (a summary
    written before, damaged or from an older release): that seed is left out of the
    record's summaries, never the whole record."""
    if problem := schema_problem(_schema()["properties"]["summaries"]["additionalProperties"],
                                 summary):
        raise MetricsError(f"{run}: its summary cannot be sealed: {problem}")
    return dict(summary)


def write_pack_record(path: str | Path, record: Mapping) -> None:
    if problem := schema_problem(_schema(), record):
        raise MetricsError(f"{path}: {problem}")
    atomic_write_json(path, dict(record))


def read_pack_record(path: str | Path) -> Mapping | None:
    """The pack record at ``path`` when it exists, reads and is valid; else None."""
    return _pack_of([path])


def _pack_of(paths: Iterable[str | Path]) -> Mapping | None:
    """The first pack record among ``paths`` (a seed job's inputs: the JSON files that
    exist and read; a seed has one), when it is valid; None when there is none or it is
    not."""
    for path in map(Path, paths):
        record = read_record(path) if path.suffix == ".json" else None
        if isinstance(record, Mapping) and record.get("format") == FORMAT:
            return record if schema_problem(_schema(), record) is None else None
    return None


def pack_summary(paths: Iterable[str | Path], run: str) -> dict | None:
    """The training summary a pack record among ``paths`` (a seed job's inputs: the JSON
    files that exist and read) holds for run directory ``run``, as the workflow names it:
    the record finished the run and sealed its summary, whose attempts are still ``run``'s
    ``attempts.json``, beside its best checkpoint. None otherwise (the seed's own job
    trains or summarises it in full): absent, unreadable or invalid records (a dry run, a
    job not yet ready, a damaged record), other files, a seed the pack could not seal,
    and a run whose training was moved aside or replaced since (the preflight's damage
    repair keeps the record). Whether the run is still what its cell makes now is
    :func:`dfil.train.sealed.sealed_summary`'s."""
    record = _pack_of(paths)
    if record is None or run not in record["finished"]:
        return None
    summary = record.get("summaries", {}).get(run)
    if summary is None or not (Path(run) / BEST).is_file():
        return None
    # attempts.json missing or damaged reads as None: the seed's own job says so
    attempts = read_record(Path(run) / ATTEMPTS)
    return dict(summary) if _canonical(attempts) == _canonical(summary["attempts"]) else None


def _canonical(value) -> str:
    """``value`` as canonical JSON (NaN equal to itself here, unlike ``==``)."""
    return json.dumps(value, sort_keys=True)
