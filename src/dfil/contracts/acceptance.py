"""The acceptance record (``results/<grid>/acceptance/<kind>/<backbone>.json``): what
``dfil acceptance`` measured of one backbone before the grid runs, or why it measured
nothing; its JSON Schema, its one writer and its reader.

``kind`` is ``cell`` (the grid's acceptance cell, trained and evaluated by the grid's own
jobs, then a few training steps of it timed) or ``qlora`` (a backbone loaded in 4-bit and
timed the same way). Where 4-bit cannot run (no CUDA) the record is ``skipped`` with that
reason and holds no numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from dfil.contracts import packaged_schema, schema_problem
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import MetricsError

#: Where a grid's acceptance records live, below its results directory.
DIRECTORY = "acceptance"
KINDS = ("cell", "qlora")


@cache
def schema() -> dict:
    return packaged_schema("acceptance.schema.json")


def record_path(results: str | Path, kind: str, backbone: str) -> Path:
    """``results/<grid>/acceptance/<kind>/<backbone>.json``."""
    if kind not in KINDS:
        raise ValueError(f"unknown acceptance kind {kind!r}; expected one of {KINDS}")
    return Path(results) / DIRECTORY / kind / f"{backbone}.json"


def validate_acceptance(record: Mapping, where: str) -> None:
    """:class:`MetricsError` naming ``where`` and the key if ``record`` breaks the schema."""
    problem = schema_problem(schema(), record)
    if problem is not None:
        raise MetricsError(f"{where}: acceptance record {problem}")


def write_acceptance(path: str | Path, record: Mapping) -> None:
    """Validate ``record`` and write it to ``path`` atomically."""
    validate_acceptance(record, str(path))
    atomic_write_json(path, dict(record))


def read_acceptance(path: str | Path) -> dict:
    """The record at ``path``: :class:`MetricsError` naming the file when it is not JSON or
    breaks the schema, with the fix."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise MetricsError(f"{path}: not a readable acceptance record ({err}); run "
                           "`snakemake acceptance` again") from None
    if not isinstance(record, Mapping):
        raise MetricsError(f"{path}: an acceptance record is a JSON object; run "
                           "`snakemake acceptance` again")
    validate_acceptance(record, f"{path} (run `snakemake acceptance` again)")
    return dict(record)


def grid_records(results: str | Path) -> list[dict]:
    """Every acceptance record of a grid (``results``: its results directory), in path
    order; none before its acceptance run."""
    root = Path(results) / DIRECTORY
    return [read_acceptance(p) for kind in KINDS for p in sorted((root / kind).glob("*.json"))]
