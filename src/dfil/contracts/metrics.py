"""The contract of ``metrics.json``: its JSON Schema, the one writer, the one reader, its
content digest, and which of its numbers are measurements (pure: json, jsonschema).

The schema (``metrics.schema.json``, shipped with the package) says what every key holds.
A subtree whose schema carries ``"x-measure": false`` describes the run (identity,
provenance, the training summary, per-item lists) rather than measuring it; every other
number is a measurement, addressed by its dotted path (``test.mf.acc``,
``csmc.mf.by_domain.finance``) in the aggregate table and in ``config/tables.yaml``.
Non-finite numbers are refused on write and on read: a NaN never becomes a table number.
The writer adds ``digest``, the SHA-256 of the record's canonical JSON without it; the
reader recomputes it, so a number edited after the file was written (or a file written
without one) is refused as damaged, and preflight moves it aside to be re-evaluated.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

from dfil.contracts import packaged_schema, schema_problem
from dfil.contracts.failure import is_failure, validate_failure
from dfil.util.atomic import atomic_write_bytes
from dfil.util.errors import MetricsError, did_you_mean

#: The key of the record's content digest.
DIGEST = "digest"


@cache
def schema() -> dict:
    """The JSON Schema of ``metrics.json``."""
    return packaged_schema("metrics.schema.json")


def _non_finite(tree, path: str = "") -> Iterator[str]:
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            yield from _non_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _non_finite(v, f"{path}.{i}")
    elif isinstance(tree, float) and not math.isfinite(tree):
        yield f"{path} = {tree}"


def validate_metrics(metrics: Mapping, where: str) -> None:
    """Raise :class:`MetricsError` naming ``where`` (a path or run) and the first offending
    key if ``metrics`` is not a valid, finite metrics record."""
    bad = list(_non_finite(metrics))
    if bad:
        raise MetricsError(f"{where}: non-finite metric {bad[0]}"
                           + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
                           + "; a diverged or damaged run cannot be evaluated into a table")
    problem = schema_problem(schema(), metrics)
    if problem is not None:
        raise MetricsError(f"{where}: metrics {problem}")


def digest(metrics: Mapping) -> str:
    """The SHA-256 (hex) of ``metrics`` as canonical JSON (sorted keys, no spaces), its
    own ``digest`` key aside: the same for the record written and the record read back."""
    body = {k: v for k, v in metrics.items() if k != DIGEST}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def digest_problem(metrics: Mapping) -> str | None:
    """What is wrong with the digest of a metrics record read back (None: it matches). A
    non-finite number has no canonical JSON, and the writer never writes one: named too."""
    if bad := next(_non_finite(metrics), None):
        return f"non-finite number {bad}, which evaluation never writes"
    if DIGEST not in metrics:
        return "no content digest, so an edit to its numbers could not be told"
    if metrics[DIGEST] != digest(metrics):
        return "content digest mismatch: its numbers changed after it was written"
    return None


def write_metrics(path: str | Path, metrics: Mapping) -> dict:
    """Validate ``metrics`` and write it with its digest to ``path`` atomically (sorted
    keys); returns the record as written."""
    validate_metrics(metrics, str(path))  # first: a NaN has no canonical JSON to digest
    record = {**metrics, DIGEST: digest(metrics)}
    text = json.dumps(record, indent=2, sort_keys=True, allow_nan=False)
    atomic_write_bytes(path, (text + "\n").encode())
    return record


def read_metrics(path: str | Path, allow_failure: bool = False) -> dict:
    """The validated metrics record at ``path``; :class:`MetricsError` if it is damaged
    (its digest included: :func:`digest_problem`). With ``allow_failure`` a failure
    record (:mod:`dfil.contracts.failure`, a cell that gave up on its last try) is
    returned too, validated against its own schema."""
    path = Path(path)
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise MetricsError(f"{path}: unreadable metrics file ({err})") from None
    if allow_failure and is_failure(metrics):
        validate_failure(metrics, str(path))
        return metrics
    validate_metrics(metrics, str(path))
    if problem := digest_problem(metrics):
        raise MetricsError(f"{path}: {problem}; move it aside and evaluate the run again "
                           "(snakemake's preflight does so)")
    return metrics


def _resolve(node: Mapping) -> Mapping:
    while "$ref" in node:
        node = schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _child(node: Mapping, key: str) -> Mapping:
    node = _resolve(node)
    if key in node.get("properties", {}):
        return node["properties"][key]
    extra = node.get("additionalProperties", {})
    return extra if isinstance(extra, Mapping) else {}


def _items(node: Mapping) -> Mapping:
    node = _resolve(node)
    for option in node.get("anyOf", ()):  # an array-or-null: the array's items
        if _resolve(option).get("type") == "array":
            return _resolve(option).get("items", {})
    return node.get("items", {})


def _object(node: Mapping) -> Mapping:
    """``node`` resolved; of an object-or-null, or an array-or-null, the object or array."""
    node = _resolve(node)
    for option in node.get("anyOf", ()):
        option = _resolve(option)
        if option.get("type") in ("object", "array"):
            return option
    return node


def measure_problem(path: str) -> str:
    """What is wrong with ``path`` as the dotted name of a measurement in metrics.json
    (``test.main.acc``, ``grid.1000.nearest_center_rate``), in words with the closest
    allowed key; "" when the schema allows it (a key or index it does not constrain
    included)."""
    node: Mapping = schema()
    done: list[str] = []
    for part in path.split("."):
        node = _object(node)
        where = ".".join(done) or "metrics.json"
        if node.get("x-measure", True) is False:
            return f"{where} is no measurement (it describes the run)"
        if node.get("type") == "array" or "items" in node:
            if not part.isdigit():
                return f"{where} is a list: {part!r} must be an index"
            node, done = node.get("items", {}), [*done, part]
            continue
        props = node.get("properties", {})
        names = node.get("propertyNames", {})
        extra = node.get("additionalProperties", {})
        if part in props:
            node = props[part]
        elif (extra is not False and part in names.get("enum", [part])
              and re.match(names.get("pattern", ""), part)):
            node = extra if isinstance(extra, Mapping) else {}
        else:
            allowed = sorted(props) + list(names.get("enum", []))
            hint = did_you_mean(part, allowed)
            shown = ", ".join(allowed) if allowed else f"keys matching {names.get('pattern')}"
            return f"{part!r} is not a key of {where} ({hint}it has {shown})"
        done.append(part)
    node = _object(node)
    if node.get("x-measure", True) is False:
        return f"{path} is no measurement (it describes the run)"
    if node.get("type") in ("object", "array"):
        return f"{path} is not a number but holds entries: name one of them"
    return ""


def measures(metrics: Mapping, node: Mapping | None = None,
             prefix: str = "") -> Iterator[tuple[str, float]]:
    """(dotted path, value) of every measurement in a validated ``metrics`` record: each
    numeric or boolean leaf outside the subtrees the schema marks ``x-measure: false``.
    Lists are indexed (``test.mf.per_class_acc.3``); null leaves are skipped."""
    node = schema() if node is None else node
    if _resolve(node).get("x-measure", True) is False or node.get("x-measure", True) is False:
        return
    if isinstance(metrics, Mapping):
        for k, v in metrics.items():
            yield from measures(v, _child(node, k), f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(metrics, list):
        for i, v in enumerate(metrics):
            yield from measures(v, _items(node), f"{prefix}.{i}")
    elif isinstance(metrics, (bool, int, float)):
        yield prefix, float(metrics)
