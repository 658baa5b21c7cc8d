"""The contract of a pack record (pure: json, jsonschema): what a ``train_pack`` job did
with one configuration's seeds (``results/<grid>/packs/<pack>.json``, schema
``pack.schema.json``).

The workflow's ``train_pack`` job trains attempt 1 of a configuration's seeds together
(:func:`dfil.train.driver.train_together`) and writes this record; each seed's
``train_cell`` job runs after it: a seed the record lists as finished needs only its
summary written; any other seed trains alone, from its run directory's state. A pack
that gives up on its last attempt, or that sbatch refused, says why (``gave_up``) and
lists no run as trained together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

from dfil.contracts import packaged_schema, schema_problem
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import MetricsError

FORMAT = "dfil-pack/1"


@cache
def _schema() -> dict:
    return packaged_schema("pack.schema.json")


def pack_record(runs: Sequence[str], together: Iterable[str] = (),
                finished: Iterable[str] = (), gave_up: Mapping | None = None) -> dict:
    """A pack record (validated): its ``runs``, those it trained ``together``, those
    ``finished``, and why it ``gave_up`` (reason, message), if it did."""
    record = {"format": FORMAT, "runs": list(runs), "together": list(together),
              "finished": list(finished)}
    if gave_up is not None:
        record["gave_up"] = {"reason": gave_up["reason"],
                             "message": " ".join(str(gave_up["message"]).split())}
    if problem := schema_problem(_schema(), record):
        raise MetricsError(f"pack record: {problem}")
    return record


def write_pack_record(path: str | Path, record: Mapping) -> None:
    if problem := schema_problem(_schema(), record):
        raise MetricsError(f"{path}: {problem}")
    atomic_write_json(path, dict(record))
