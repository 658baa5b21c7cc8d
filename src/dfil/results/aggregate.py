"""Run directories -> one tidy long-format table of numbers (pure: json, pandas).

One row per (run, measurement): the run key's parts (:func:`dfil.runkey.parse_key`), the
metric as a dotted path into ``metrics.json`` (``test.mf.acc``,
``test.main.per_class_acc.3``, ``csmc.mf.by_domain.finance``), its value, and provenance
(run directory, config hash, package version, git commit). Which numbers are measurements
is the metrics contract's to say (:func:`dfil.contracts.metrics.measures`); every file is
validated against it on the way in. Every number a table prints is one of these rows.
"""

from __future__ import annotations

from dfil.errors import MissingInputError, RefusedError

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from dfil.contracts.failure import is_failure
from dfil.contracts.metrics import measures, read_metrics
from dfil.runkey import FIELDS, parse_key

COLUMNS = [*FIELDS, "metric", "value", "run_dir", "config_hash", "package_version",
           "git_commit"]
#: The metric of a cell that gave up on its last try (its only row).
FAILED = "failed"


def run_rows(metrics_path: Path, runs_root: Path) -> list[dict]:
    """Rows of one run's ``metrics.json`` (validated), plus ``train.attempts``; a failure
    record (a cell that gave up) is one row, metric ``failed``, value 1."""
    metrics_path = Path(metrics_path)
    run_dir = metrics_path.parent
    key = parse_key(run_dir.relative_to(runs_root).as_posix())
    metrics = read_metrics(metrics_path, allow_failure=True)
    prov = metrics["provenance"]
    base = {**key, "run_dir": run_dir.as_posix(), "config_hash": metrics["config_hash"],
            "package_version": prov["package_version"], "git_commit": prov["git_commit"]}
    if is_failure(metrics):
        return [{**base, "metric": FAILED, "value": 1.0}]
    rows = [{**base, "metric": name, "value": value} for name, value in measures(metrics)]
    attempts = metrics["train"].get("attempts", [])
    rows.append({**base, "metric": "train.attempts", "value": float(len(attempts))})
    return rows


def aggregate(metrics_files: Iterable[Path], runs_root: Path) -> pd.DataFrame:
    """The tidy table of all ``metrics_files`` (each below ``runs_root``)."""
    rows = [row for path in sorted(map(Path, metrics_files))
            for row in run_rows(path, Path(runs_root))]
    return pd.DataFrame(rows, columns=COLUMNS)

def metrics_files(runs_root: Path, given: Iterable[Path] | None = None) -> list[Path]:
    """``given`` if any, else every ``metrics.json`` below ``runs_root``.

    ``ValueError`` naming ``runs_root`` when it holds none: a mistyped ``--runs`` must not
    aggregate to an empty table.
    """
    files = sorted(map(Path, given or []))
    if files:
        return files
    runs_root = Path(runs_root)
    if not runs_root.is_dir():
        raise MissingInputError(f"{runs_root}: no such runs directory")
    files = sorted(runs_root.rglob("metrics.json"))
    if not files:
        raise MissingInputError(f"{runs_root}: no run directory below it has a metrics.json")
    return files


def check_replaceable(table: pd.DataFrame, out: Path) -> None:
    """``ValueError`` when ``table`` is empty and the aggregate at ``out`` has rows: an
    empty table never silently replaces a full one."""
    out = Path(out)
    if len(table) or not out.is_file():
        return
    import pyarrow.parquet as pq

    rows = pq.read_metadata(out).num_rows
    if rows:
        raise RefusedError(f"{out}: refusing to replace its {rows} rows with an empty table; "
                         "remove the file first if that is what you want")
