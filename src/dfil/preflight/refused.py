"""Cells whose job SLURM refused last time, submitted again (before the DAG is built).

A training or evaluation job that sbatch refused (not for a queue limit) leaves its cell's
failure record, ``refused`` with sbatch's words, written by the small job the workflow's
sbatch sent in its place (:mod:`dfil.cluster.submit`), so that run's tables say why the
cell did not run. A refusal is the site's answer to the job's resources, which the user
may since have changed; so the next run moves that record (and the evaluation outputs
made from it) to the run's ``refused/`` folder, one line each, and the DAG submits the job
again. Every other failure record stays until it is asked for again
(:mod:`dfil.contracts.failure`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from dfil.contracts.failure import is_failure, read_record
from dfil.contracts.rundir import EVALUATION_OUTPUTS, METRICS, SUMMARY

#: Where a run's refused records are moved, below its run directory.
FOLDER = "refused"


def _refused(path: Path) -> dict | None:
    """The failure of the record at ``path`` when it is a refused submission's."""
    record = read_record(path)
    if is_failure(record) and record["failed"].get("reason") == "refused":
        return record["failed"]
    return None


def resubmit_refused(run_dirs: Iterable[Path], apply: bool = True) -> list[str]:
    """Move each refused failure record of ``run_dirs`` (a refused training's summary with
    every evaluation output, or a refused evaluation's outputs) to ``<run>/refused/`` when
    ``apply``; one line per run."""
    notes = []
    for run_dir in map(Path, run_dirs):
        for name, moved in ((SUMMARY, (SUMMARY, *EVALUATION_OUTPUTS)),
                            (METRICS, EVALUATION_OUTPUTS)):
            failed = _refused(run_dir / name)
            if failed is None:
                continue
            if apply:
                (run_dir / FOLDER).mkdir(exist_ok=True)
                for each in moved:
                    if (run_dir / each).exists():
                        (run_dir / each).replace(run_dir / FOLDER / each)
            verb = "submitting it again" if apply else "would submit it again"
            notes.append(f"dfil: {run_dir}: its {failed.get('stage', 'job')} job was refused "
                         f"last time ({failed.get('message', '')}); {verb}")
            break
    return notes
