"""What a run was made from, recorded in the run's own files: its cell (the name the grid
derives from the run key), its config hash and the sha256 of every input it trained on.

``train_summary.json``, every attempt in ``attempts.json``, the resume state, the
checkpoint's metadata and ``metrics.json`` carry the same record, ``identity``::

    {"cell": <cell name>, "config_hash": <16 hex>, "inputs_sha256": <64 hex>,
     "inputs": {"<input>/<file>": <sha256>, ...}}

``inputs`` names each input as the cell reads it (``model``, ``data.source``,
``data.test_source``, ``data.qure_source``) with the file below it, so a difference is
said file by file; ``inputs_sha256`` is the digest of ``inputs`` (:func:`inputs_digest`).
An attempt is reused only when its record equals the cell's record now
(:func:`differences` empty); a run directory whose record names another cell, or another
config hash than the grid's, is not that cell's run (:func:`identity_problem`).
Pure: json and hashlib.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

#: The key of the record in every run file that carries it.
KEY = "identity"


def inputs_digest(inputs: Mapping[str, str]) -> str:
    """The sha256 of ``inputs`` (input/file -> sha256) as sorted-key compact JSON."""
    text = json.dumps(dict(inputs), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def run_identity(cell: str, config_hash: str, inputs: Mapping[str, str]) -> dict:
    """The identity record of a run of cell ``cell`` with ``config_hash`` trained on
    ``inputs``."""
    return {"cell": cell, "config_hash": config_hash, "inputs_sha256": inputs_digest(inputs),
            "inputs": dict(sorted(inputs.items()))}


def _short(value: str | None) -> str:
    return "none" if value is None else value[:12]


def differences(recorded: Mapping | None, current: Mapping) -> list[str]:
    """Why the run ``recorded`` is not the run ``current`` would make: one phrase per
    difference (config hash, then each input file added, removed or changed); empty when
    they are the same run. A record without input digests differs from any record with
    them."""
    if not recorded:
        return ["its record names no config hash and no input digests"]
    out = []
    if recorded.get("config_hash") != current["config_hash"]:
        out.append(f"config {recorded.get('config_hash')} -> {current['config_hash']}")
    old = recorded.get("inputs")
    if not isinstance(old, Mapping):
        return [*out, "its record names no input digests (trained before they were "
                      "recorded)"]
    new = current["inputs"]
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            out.append(f"{name} sha256 {_short(old.get(name))} -> {_short(new.get(name))}")
    return out


def identity_problem(record: Mapping, where: str, cell: str, config_hash: str) -> str | None:
    """Why the run file ``where`` holding ``record`` is not the run of cell ``cell`` with
    ``config_hash`` (the run its path and the grid name); None when it is. Reads the
    record's ``cell`` and ``config_hash`` (top level, where every run file has them)."""
    found_cell, found_hash = record.get("cell"), record.get("config_hash")
    if found_cell != cell:
        return (f"{where} records the run of cell {found_cell}, but its path is the run of "
                f"cell {cell}")
    if found_hash != config_hash:
        return (f"{where} records config {found_hash}, but the grid's cell {cell} is config "
                f"{config_hash}")
    return None
