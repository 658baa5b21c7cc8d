"""What a cell reads, for its provenance: the backbone and the data, each with the hub
commit it was fetched at and the sha256 of every file, copied from the stamp of the step
that made the files (a hub fetch, the embedded backbone's conversion, the synthetic data's
generation, the probe sets' manifest). No job hashes weights: a backbone without a stamp
is recorded with a note saying so. Local data files without a stamp (a user's copy of
QuRe or SST-5) are small and hashed here, and say so."""

from __future__ import annotations

import json
from pathlib import Path

from dfil.config.cell import CellConfig, config_hash
from dfil.contracts.digests import NAME as DIR_STAMP
from dfil.contracts.digests import read_dir_stamp, sha256_of
from dfil.contracts.identity import run_identity
from dfil.hub import cache_root, parse_hub_source, stamp_path

#: Tasks made in place from a seed: their ``data.source`` (the grid's default) is not read.
MADE_IN_PLACE = {"ordinal_standin"}
#: ``stamp`` of a local data file hashed by the job, there being no stamp beside it.
HASHED_HERE = "hashed by this job (no stamp beside the data)"


def _source(source: str) -> dict | None:
    if not source:
        return None
    pinned = parse_hub_source(source)
    if pinned is None:
        return {"path": source}
    return {"repo": pinned[0], "commit": pinned[1]}


def cell_inputs(cell: CellConfig) -> dict:
    """``model``: repo and commit of a pinned hub backbone (else its ``model_id`` or
    ``random`` for an ``arch`` backbone); ``data``: each of the cell's sources (train,
    test, QuRe) as repo and commit, or the local path it names (pure: reads no file)."""
    b = cell.model.backbone
    if b.revision:
        model = {"repo": b.model_id, "commit": b.revision}
    else:
        model = {"id": b.model_id or ("random" if b.arch is not None else "")}
    d = cell.data
    data = {name: _source(value) for name, value in (
        ("source", d.source), ("test_source", d.test_source), ("qure_source", d.qure_source))}
    return {"model": model, "data": {k: v for k, v in data.items() if v is not None}}


def _hub_digests(kind: str, found: dict) -> dict:
    path = stamp_path(cache_root(), kind, found["repo"], found["commit"])
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {"note": f"no readable fetch stamp {path}: run `dfil hub fetch` for it"}
    out = {"stamp": str(path)}
    if stamp.get("sha256"):
        out["sha256"] = dict(stamp["sha256"])
    if stamp.get("source_sha256"):
        out["source_sha256"] = dict(stamp["source_sha256"])
    if "sha256" not in out:
        out["note"] = (f"{path} records no sha256 of the files jobs read (a fetch older "
                       "than that): fetch it again into a fresh cache to record them")
    return out


def _dir_digests(root: Path, what: str) -> dict:
    stamp = read_dir_stamp(root)
    if stamp is None:
        return {"note": f"{root} has no {DIR_STAMP}: {what}"}
    return {"sha256": dict(stamp["sha256"]), "stamp": str(root / DIR_STAMP)}


def _model_digests(cell: CellConfig, found: dict) -> dict:
    from dfil.model.embedded import PREFIX, embedded_path

    if "repo" in found:
        return _hub_digests("model", found)
    model_id = found.get("id", "")
    if model_id == "random":
        return {"note": "random initialisation from the backbone's arch: no weights file"}
    if model_id.startswith(PREFIX):
        name = model_id[len(PREFIX):]
        return {"path": str(embedded_path(name)), **_dir_digests(
            embedded_path(name), f"run `dfil fetch-backbone {name}`, which stamps it")}
    if Path(model_id).is_dir():
        return _dir_digests(Path(model_id), "weights are hashed only where they are made "
                            "(a hub fetch, an embedded conversion), never by a job")
    return {"note": f"{model_id} is neither fetched nor a local directory: not digested"}


def _local_data_digests(path: Path) -> dict:
    if path.is_dir():
        stamp = read_dir_stamp(path)
        if stamp is not None:
            return {"sha256": dict(stamp["sha256"]), "stamp": str(path / DIR_STAMP)}
        files = sorted(p for p in path.rglob("*") if p.is_file())
        return {"sha256": {p.relative_to(path).as_posix(): sha256_of(p) for p in files},
                "stamp": HASHED_HERE}
    if path.is_file():
        stamp = read_dir_stamp(path.parent)
        if stamp is not None and path.name in stamp["sha256"]:
            return {"sha256": {path.name: stamp["sha256"][path.name]},
                    "stamp": str(path.parent / DIR_STAMP)}
        return {"sha256": {path.name: sha256_of(path)}, "stamp": HASHED_HERE}
    return {"note": f"{path} does not exist here"}


def _probe_digests(probes_dir: str) -> dict | None:
    manifest = Path(probes_dir) / "manifest.json"
    try:
        sets = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return {"path": probes_dir, "stamp": str(manifest),
            "sha256": {f"{name}.jsonl": s["sha256"] for name, s in sorted(sets.items())
                       if isinstance(s, dict) and "sha256" in s}}


def stamped_inputs(cell: CellConfig) -> dict:
    """:func:`cell_inputs` with, on each input, the sha256 of its files (``sha256``: file
    -> digest; a hub dataset's also ``source_sha256``) and ``stamp``, where they were
    copied from; ``note`` says why an input has none. The probe sets a cell reads are
    ``data.probes``; a task made in place records no ``data.source``."""
    inputs = cell_inputs(cell)
    inputs["model"] = {**inputs["model"], **_model_digests(cell, inputs["model"])}
    data = inputs["data"]
    if cell.data.task in MADE_IN_PLACE:
        data.pop("source", None)
    for name, found in data.items():
        extra = (_hub_digests("dataset", found) if "repo" in found
                 else _local_data_digests(Path(found["path"])))
        data[name] = {**found, **extra}
    if cell.data.task == "frog" and cell.eval.probes and cell.data.probes_dir:
        probes = _probe_digests(cell.data.probes_dir)
        if probes is not None:
            data["probes"] = probes
    return inputs


#: The inputs of :func:`stamped_inputs` evaluation reads and training does not.
EVALUATION_ONLY = ("qure_source", "probes")


def _identities(name: str, found: dict) -> dict[str, str]:
    """``found``'s files as ``<name>/<file>`` -> sha256; an input without digests is one
    entry saying what it is (its repo and commit, path or id, and why it has none)."""
    if found.get("sha256"):
        return {f"{name}/{rel}": digest for rel, digest in found["sha256"].items()}
    what = (f"{found['repo']}@{found['commit']}" if "repo" in found
            else found.get("path") or found.get("id") or "")
    return {name: f"unstamped {what}: {found.get('note', 'no digests')}"}


def trained_inputs(inputs: dict) -> dict[str, str]:
    """What a cell trains on, from :func:`stamped_inputs`' ``inputs``: the sha256 of every
    file of its backbone (``model/<file>``) and of the data it trains and is tested on
    (``data.<source>/<file>``). Frozen features are no separate entry: their cache files
    are named by the backbone's digests and the prompts
    (:func:`dfil.engine.features.feature_paths`), which these determine."""
    out = _identities("model", inputs["model"])
    for name, found in sorted(inputs["data"].items()):
        if name not in EVALUATION_ONLY:
            out.update(_identities(f"data.{name}", found))
    return out


def cell_identity(cell: CellConfig) -> dict:
    """The identity record of the run ``cell`` makes now
    (:func:`dfil.contracts.identity.run_identity`): its name, config hash and
    :func:`trained_inputs`."""
    return run_identity(cell.name, config_hash(cell), trained_inputs(stamped_inputs(cell)))


def model_digest(cell: CellConfig) -> str:
    """One digest of the cell's backbone weights (from their stamp, as
    :func:`trained_inputs` names them): what keys its frozen features besides its
    config and the prompts."""
    from dfil.contracts.identity import inputs_digest

    found = cell_inputs(cell)["model"]
    return inputs_digest(_identities("model", {**found, **_model_digests(cell, found)}))
