"""What a cell reads, for its provenance: the backbone and the data, each with the hub
commit it was fetched at (pure: no torch)."""

from __future__ import annotations

from dfil.cellconfig import CellConfig
from dfil.hub import parse_hub_source


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
    test, QuRe) as repo and commit, or the local path it names."""
    b = cell.model.backbone
    if b.revision:
        model = {"repo": b.model_id, "commit": b.revision}
    else:
        model = {"id": b.model_id or ("random" if b.arch is not None else "")}
    d = cell.data
    data = {name: _source(value) for name, value in (
        ("source", d.source), ("test_source", d.test_source), ("qure_source", d.qure_source))}
    return {"model": model, "data": {k: v for k, v in data.items() if v is not None}}
