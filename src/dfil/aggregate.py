"""Run directories -> one tidy long-format table of numbers (pure: json, pandas).

One row per (cell, metric): the cell keys parsed from the run directory
(``<task>/<backbone>/<method>[+<variant>]/lam<l>/n<budget>/<init>/seed<s>``), the metric as
a dotted path into ``metrics.json`` (``test.mf.acc``, ``test.main.per_class_acc.3``,
``csmc.mf.by_domain.finance``), its value, and provenance (run directory, config hash,
package version, git commit). Every number a table prints is one of these rows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

KEY = re.compile(
    r"(?P<task>[^/]+)/(?P<backbone>[^/]+)/(?P<method>[^/+]+)(?:\+(?P<variant>[^/]+))?/"
    r"lam(?P<lam>[^/]+)/n(?P<budget>[^/]+)/(?P<init>[^/]+)/seed(?P<seed>[^/]+)$"
)
#: Subtrees that describe the run rather than measure it, and long per-item lists.
_SKIP = {"train", "provenance", "per_pair", "cell", "method", "config_hash", "seed", "note",
         "data_note"}
COLUMNS = ["task", "backbone", "method", "variant", "lam", "budget", "init", "seed",
           "metric", "value", "run_dir", "config_hash", "package_version", "git_commit"]


def parse_key(key: str) -> dict:
    """Cell keys of a run-directory key; ``ValueError`` naming it if it is not one."""
    m = KEY.search(key)
    if not m:
        raise ValueError(f"{key!r} is not a run key task/backbone/method/lam/n/init/seed")
    out = m.groupdict()
    out["variant"] = out["variant"] or ""
    return out


def flatten(tree, prefix: str = "") -> Iterable[tuple[str, float]]:
    """(dotted path, number) for every numeric leaf; lists are indexed; None is skipped."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k in _SKIP:
                continue
            yield from flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from flatten(v, f"{prefix}.{i}")
    elif isinstance(tree, bool):
        yield prefix, float(tree)
    elif isinstance(tree, (int, float)) and not (isinstance(tree, float) and math.isnan(tree)):
        yield prefix, float(tree)


def run_rows(metrics_path: Path, runs_root: Path) -> list[dict]:
    """Rows of one run's ``metrics.json``."""
    metrics_path = Path(metrics_path)
    run_dir = metrics_path.parent
    key = parse_key(run_dir.relative_to(runs_root).as_posix())
    try:
        metrics = json.loads(metrics_path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{metrics_path}: invalid JSON ({err})") from None
    prov = metrics.get("provenance", {})
    base = {**key, "run_dir": run_dir.as_posix(), "config_hash": metrics.get("config_hash"),
            "package_version": prov.get("package_version"), "git_commit": prov.get("git_commit")}
    rows = [{**base, "metric": name, "value": value} for name, value in flatten(metrics)]
    attempts = metrics.get("train", {}).get("attempts", [])
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
        raise ValueError(f"{runs_root}: no such runs directory")
    files = sorted(runs_root.rglob("metrics.json"))
    if not files:
        raise ValueError(f"{runs_root}: no run directory below it has a metrics.json")
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
        raise ValueError(f"{out}: refusing to replace its {rows} rows with an empty table; "
                         "remove the file first if that is what you want")
