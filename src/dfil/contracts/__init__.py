"""The files passed between stages and their contracts: the run directory's file names
(:mod:`.rundir`) and the schema of ``metrics.json`` (:mod:`.metrics`). Pure Python; the
writers and the readers of a file import its contract from here; each contract checks
its records against its packaged JSON Schema with :func:`schema_problem`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources

import jsonschema


def packaged_schema(name: str) -> dict:
    """The JSON Schema ``name`` shipped in this package (e.g. ``metrics.schema.json``)."""
    return json.loads(resources.files(__name__).joinpath(name).read_text())


def schema_problem(schema: Mapping, record: Mapping) -> str | None:
    """``"key <dotted key>: <message>"`` of the error of ``record`` against ``schema`` that
    jsonschema ranks first, or None when it conforms."""
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(record))
    if error is None:
        return None
    key = ".".join(str(p) for p in error.absolute_path) or "<root>"
    return f"key {key}: {error.message}"
