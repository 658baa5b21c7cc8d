"""What the report says about runs that did not finish and outputs that are stale (reads
files; every input optional): a grid cell without a readable ``metrics.json`` is *not
run*, with the reason its failure record gives (``<run>/failure.json``, key ``reason``,
written by the cluster's failure handling) or "no metrics.json"; ``stale.json`` beside
the tables (key ``stale``: the files kept from the last good build) lists stale outputs."""

from __future__ import annotations

import json
from pathlib import Path

from dfil.contracts import rundir

FAILURE = "failure.json"
STALE = "stale.json"


def _reason(run: Path) -> str:
    record = run / FAILURE
    if record.is_file():
        try:
            found = json.loads(record.read_text())
            return f"{found.get('reason', 'failed')}: {found.get('log', record)}"
        except (OSError, json.JSONDecodeError):
            return f"failed (unreadable record {record})"
    return "no metrics.json: failed, or not built yet"


def unfinished(keys, runs: Path) -> dict[str, str]:
    """Run key -> why it has no metrics, for every key of ``keys`` without metrics."""
    return {k: _reason(Path(runs) / k) for k in sorted(keys)
            if not (Path(runs) / k / rundir.METRICS).is_file()}


def stale(tables_dir: Path) -> list[str]:
    """The outputs the last failed rebuild left from the build before it ([] if none)."""
    path = Path(tables_dir) / STALE
    if not path.is_file():
        return []
    try:
        return [str(x) for x in json.loads(path.read_text()).get("stale", [])]
    except (OSError, json.JSONDecodeError, AttributeError):
        return [f"{path} (unreadable)"]
