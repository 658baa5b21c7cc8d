"""Run directories -> one tidy long-format table of numbers (pure: json, pandas).

One row per (run, measurement): the run key's parts (:func:`dfil.config.runkey.parse_key`), the
metric as a dotted path into ``metrics.json`` (``test.mf.acc``,
``test.main.per_class_acc.3``, ``csmc.mf.by_domain.finance``), its value, and provenance
(run directory, config hash, package version, git commit, and the library versions as one
text, :func:`dfil.results.origin.versions_text`). Which numbers are measurements
is the metrics contract's to say (:func:`dfil.contracts.metrics.measures`); every file is
validated against it on the way in, its digest checked, and every number the run's
``predictions.parquet`` determines recomputed from it
(:func:`dfil.contracts.predcheck.predictions_problem`): an edited number stops the
aggregate, naming the file and key, and never becomes a row. (A run without its
predictions is checked on its digest alone: the DAG re-evaluates such a run before it
aggregates, since the predictions are an output of the same job.) A record naming its
run (``identity``, :mod:`dfil.contracts.identity`) must name the cell of its path: a run
directory moved to another cell's path is refused, naming both, and never becomes that
cell's rows. Every number a table
prints is one of these rows. Beside them, a few numbers of each run's
``predictions.parquet`` (:mod:`dfil.contracts.predictions`: ``pred.*`` facts and
``baseline.*`` accuracies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from dfil.config.runkey import FIELDS, RunPoint, cell_name, format_key, parse_key
from dfil.contracts.failure import KEY, is_failure
from dfil.contracts.identity import KEY as IDENTITY
from dfil.contracts.identity import identity_problem
from dfil.contracts.metrics import measures, read_metrics
from dfil.contracts.predcheck import predictions_problem
from dfil.contracts.predictions import baselines, prediction_facts, read_predictions
from dfil.contracts.rundir import ASIDE, METRICS, PREDICTIONS
from dfil.results.origin import versions_text
from dfil.util.errors import MetricsError, MissingInputError, RefusedError

COLUMNS = [*FIELDS, "metric", "value", "run_dir", "config_hash", "package_version",
           "git_commit", "libraries"]
#: The metric of a cell that gave up on its last try (its only row): ``failed.<reason>``.
FAILED = "failed"


def failed_metric(reason: str) -> str:
    """The metric of the row of a cell that failed by ``reason``."""
    return f"{FAILED}.{reason}"


def failure_reason(metric: str) -> str | None:
    """The failure reason a row's ``metric`` records (``error`` for a bare ``failed``);
    None for a measured metric."""
    if metric == FAILED or metric.startswith(FAILED + "."):
        return metric[len(FAILED) + 1:] or "error"
    return None


def run_rows(metrics_path: Path, runs_root: Path, hashes: Mapping[str, str] | None = None
             ) -> list[dict]:
    """Rows of one run's ``metrics.json`` (validated), plus ``train.attempts``; a failure
    record (a cell that gave up) is one row, metric ``failed.<reason>``, value 1. A run
    whose identity names another cell than its path, or (``hashes``: run key -> the
    grid's config hash) another config than the grid's, is refused naming both."""
    metrics_path = Path(metrics_path)
    run_dir = metrics_path.parent
    key = parse_key(run_dir.relative_to(runs_root).as_posix())
    metrics = read_metrics(metrics_path, allow_failure=True)
    run_key = run_dir.relative_to(runs_root).as_posix()
    if IDENTITY in metrics:  # every run evaluated since runs record their identity
        grid_hash = (hashes or {}).get(run_key, metrics["config_hash"])
        for record in (metrics, metrics[IDENTITY]):
            if problem := identity_problem(record, str(metrics_path), cell_name(run_key),
                                           grid_hash):
                raise RefusedError(f"{problem}; a run directory is read only at its own "
                                   "cell's path (snakemake's preflight moves it aside and "
                                   "the DAG makes the run again)")
    prov = metrics["provenance"]
    base = {**key, "run_dir": run_dir.as_posix(), "config_hash": metrics["config_hash"],
            "package_version": prov["package_version"], "git_commit": prov["git_commit"],
            "libraries": versions_text(prov.get("versions"))}
    if is_failure(metrics):
        return [{**base, "metric": failed_metric(metrics[KEY]["reason"]), "value": 1.0}]
    if (run_dir / PREDICTIONS).is_file() and (
            problem := predictions_problem(metrics, run_dir / PREDICTIONS)):
        raise MetricsError(f"{metrics_path}: {problem}; move it aside and evaluate the run "
                           "again (snakemake's preflight does so)")
    rows = [{**base, "metric": name, "value": value} for name, value in measures(metrics)]
    attempts = metrics["train"].get("attempts", [])
    rows.append({**base, "metric": "train.attempts", "value": float(len(attempts))})
    rows += [{**base, "metric": name, "value": value}
             for name, value in predicted(run_dir, metrics).items()]
    return rows


def predicted(run_dir: Path, metrics: dict) -> dict[str, float]:
    """What the aggregate keeps of the run's ``predictions.parquet``
    (:mod:`dfil.contracts.predictions`: facts for the degenerate checks, each gold set's
    majority-class and chance accuracies); none when the run has no predictions."""
    path = run_dir / PREDICTIONS
    if not path.is_file():
        return {}
    frame = read_predictions(path)
    classes = len(metrics.get("data", {}).get("counts", {}).get("test", []))
    return {**prediction_facts(frame, metrics.get("best_path")),
            **(baselines(frame, classes) if classes else {})}


def aggregate(metrics_files: Iterable[Path], runs_root: Path,
              hashes: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The tidy table of all ``metrics_files`` (each below ``runs_root``); ``hashes``
    (run key -> the grid's config hash), where given, each run's must match."""
    rows = [row for path in sorted(map(Path, metrics_files))
            for row in run_rows(path, Path(runs_root), hashes)]
    return pd.DataFrame(rows, columns=COLUMNS)


def metrics_files(runs_root: Path, given: Iterable[Path] | None = None) -> list[Path]:
    """``given`` if any, else every ``metrics.json`` below ``runs_root`` but those a run
    keeps aside (its ``damaged/`` and ``superseded/`` folders).

    ``ValueError`` naming ``runs_root`` when it holds none: a mistyped ``--runs`` must not
    aggregate to an empty table.
    """
    files = sorted(map(Path, given or []))
    if files:
        return files
    runs_root = Path(runs_root)
    if not runs_root.is_dir():
        raise MissingInputError(f"{runs_root}: no such runs directory")
    files = sorted(path for path in runs_root.rglob(METRICS)
                   if not set(path.relative_to(runs_root).parts[:-1]) & set(ASIDE))
    if not files:
        raise MissingInputError(f"{runs_root}: no run directory below it has a metrics.json")
    return files


def run_keys(table: pd.DataFrame) -> set[str]:
    """The run keys of an aggregate table's rows."""
    points = table[list(FIELDS)].drop_duplicates().itertuples(index=False)
    return {format_key(RunPoint(*point)) for point in points}


def run_hashes(table: pd.DataFrame) -> dict[str, str]:
    """Each run key of an aggregate table's rows -> the config hash its run was made for."""
    rows = table[[*FIELDS, "config_hash"]].drop_duplicates().itertuples(index=False)
    return {format_key(RunPoint(*row[:-1])): str(row[-1]) for row in rows}


def check_replaceable(table: pd.DataFrame, out: Path, grid_keys: Iterable[str] | None = None,
                      drop: bool = False) -> list[str]:
    """The runs the aggregate at ``out`` holds that ``table`` lacks, sorted; a
    :class:`RefusedError` naming them if that is not allowed: a table never replaces one
    built from more runs unless ``drop`` says so, or each run it drops is outside
    ``grid_keys`` (the grid's own run list: a grid shrunk on purpose). An old table that
    cannot be read holds runs unknown, so it is refused too (unless ``drop``): the CSV
    beside it, which the new table also replaces, may hold them all."""
    out = Path(out)
    if not out.is_file():
        return []
    try:
        old = pd.read_parquet(out, columns=list(FIELDS))
    except Exception as err:  # pyarrow's errors for a damaged file are of many types
        if drop:
            return []
        why = " ".join(str(err).split())[:120]
        raise RefusedError(
            f"{out}: refusing to replace it: it cannot be read ({why}), so which runs it "
            f"and {out.with_suffix('.csv').name} beside it hold is unknown; aggregate every "
            "run (no --metrics) after moving both aside, or pass --drop-unlisted-runs to "
            "replace them") from None
    dropped = sorted(run_keys(old) - (run_keys(table) if len(table) else set()))
    kept_by_grid = [k for k in dropped if grid_keys is None or k in set(grid_keys)]
    if kept_by_grid and not drop:
        held = len(run_keys(old))
        raise RefusedError(
            f"{out}: refusing to replace it: it holds {held} runs and the new table lacks "
            f"{len(kept_by_grid)} of them ({', '.join(kept_by_grid[:3])}"
            + (", ..." if len(kept_by_grid) > 3 else "") + "); aggregate every run (no "
            "--metrics), or pass --drop-unlisted-runs to drop them")
    return dropped
