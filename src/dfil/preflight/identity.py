"""Run directories that are not the grid's run at their path, and generated files that
are not what the grid makes, found before Snakemake builds the DAG.

Snakemake decides what to run from timestamps and parameters alone: a ``cell.yaml`` or
``grid.yaml`` edited by hand, or a run directory moved to another cell's path, still
counts as done. Before the DAG is built:

- a generated ``grid.yaml`` or ``cell.yaml`` whose text differs from what the grid makes
  (:func:`dfil.config.cell.cell_of`) is written again from the grid, one line each; a
  rewritten ``cell.yaml`` is newer than the run's training outputs, so the cell trains
  again, and outputs made for another config are moved aside (:mod:`dfil.train.superseded`);
- a run whose ``train_summary.json`` or ``metrics.json`` records another cell than its
  path names (:func:`dfil.contracts.identity.identity_problem`), or whose summary records
  no input digests (trained before runs recorded them), has those moved to ``damaged/``
  with its evaluation outputs, so the DAG trains it again;
- an evaluated run missing ``predictions.parquet`` or ``mf.json`` has its evaluation
  outputs moved to ``damaged/``, so the DAG evaluates it again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import yaml

from dfil.config.cell import cell_of, dump_cell
from dfil.config.grid import Grid
from dfil.contracts.failure import is_failure
from dfil.contracts.identity import KEY, identity_problem
from dfil.contracts.rundir import CELL, DAMAGED, EVALUATION_OUTPUTS, METRICS, SUMMARY
from dfil.preflight.damage import move_aside
from dfil.util.atomic import atomic_write_bytes

#: How many rewritten files are named one by one; the rest are counted in one line.
NAMED = 3


def _rewrite(path: Path, text: str, apply: bool) -> bool:
    """Write ``text`` to ``path`` (when ``apply``) where the file there differs; whether
    it did differ."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    if apply:
        atomic_write_bytes(path, text.encode())
    return True


def generated_files(grid: Grid, workdir: Path, apply: bool) -> list[str]:
    """One line per generated file (the resolved ``grid.yaml``, each run's ``cell.yaml``;
    past :data:`NAMED` of them, one line counting the rest) that differs from what the
    grid makes now, each written again when ``apply``."""
    results = workdir / grid.results
    found = []
    if (path := results / "grid.yaml").is_file():
        # What the grid_config job writes from its parameter, the grid as sorted JSON.
        made = Grid(json.loads(json.dumps(grid.config, sort_keys=True)))
        if _rewrite(path, yaml.safe_dump(made.config, sort_keys=False), apply):
            found.append(path)
    for key in sorted(grid.cells):
        path = results / "runs" / key / CELL
        if not path.is_file():
            continue
        text = dump_cell(cell_of(json.loads(grid.cell_json(key))))  # the job's input
        if _rewrite(path, text, apply):
            found.append(path)
    verb = "written again" if apply else "a run that builds the DAG writes it again"
    notes = [f"dfil: {path}: not what the grid makes now (edited by hand, or the grid "
             f"changed): {verb} from the grid" for path in found[:NAMED]]
    if len(found) > NAMED:
        notes.append(f"dfil: and {len(found) - NAMED} more generated files under {results}: "
                     f"{'written again' if apply else 'to be written again'} likewise")
    return notes


def _record(path: Path) -> dict | None:
    """The JSON object at ``path``; None where there is none or it does not read (a
    damaged file is :mod:`dfil.preflight.damage`'s)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def run_problem(run_dir: Path, name: str) -> tuple[str, str] | None:
    """What makes ``run_dir`` not the run of cell ``name``, and what the DAG then does:
    ``("retrain" | "re-evaluate", why)``; None when nothing does. (A config hash other
    than the grid's is Snakemake's to see: the cell's parameter changed with it.)"""
    summary = _record(run_dir / SUMMARY)
    if summary is not None:
        where = run_dir / SUMMARY
        if problem := identity_problem(summary, str(where), name, summary.get("config_hash")):
            return "retrain", problem
        if not is_failure(summary) and KEY not in summary:
            return "retrain", (f"{where} records no input digests (trained before runs "
                               "recorded them): its weights cannot show what they were "
                               "trained on")
    metrics = _record(run_dir / METRICS)
    if metrics is None:
        return None
    where = run_dir / METRICS
    if problem := identity_problem(metrics, str(where), name, metrics.get("config_hash")):
        return "retrain", problem
    if not is_failure(metrics):
        gone = [n for n in EVALUATION_OUTPUTS if not (run_dir / n).is_file()]
        if gone:
            return "re-evaluate", f"{where} is there without {', '.join(gone)}"
    return None


def foreign_runs(grid: Grid, runs: Path, dirs: Iterable[Path], apply: bool) -> list[str]:
    """One line per run directory of ``dirs`` (below ``runs``) that :func:`run_problem`
    finds, its files moved to ``damaged/`` when ``apply``: the summary and the evaluation
    outputs for a run to retrain, the evaluation outputs for one to re-evaluate."""
    notes = []
    for run_dir in dirs:
        key = Path(run_dir).relative_to(runs).as_posix()
        found = run_problem(Path(run_dir), cell_of(grid.cell(key).config).name)
        if found is None:
            continue
        redo, problem = found
        move = (SUMMARY, *EVALUATION_OUTPUTS) if redo == "retrain" else EVALUATION_OUTPUTS
        if apply:
            move_aside(Path(run_dir), set(move))
        verb = "moved to" if apply else "a run that builds the DAG moves them to"
        what = ("training the cell again" if redo == "retrain"
                else "evaluating the run again from its checkpoint")
        notes.append(f"dfil: {problem}; {verb} {run_dir}/{DAMAGED}/, {what}")
    return notes
