"""Which cells of a grid have not finished, and why (pure: json, no torch): ``dfil grid
status``.

A cell is finished when its ``metrics.json`` holds metrics. Otherwise its reason is read
from its run directory: a failure record (:mod:`dfil.contracts.failure`: OOM, TIMEOUT,
401, error, as its last try recorded it), else a submission sbatch refused, in its words
(:mod:`dfil.cluster.submit`), else the state a retry will pick up
(``memory_plan.json``: out of memory, the retry changes its memory plan; ``resume.pt``:
stopped by a signal or the time limit, the retry resumes), else trained but not evaluated,
else not started. Each line names the log to read.
"""

from __future__ import annotations

from pathlib import Path

from dfil.cluster.submit import read_refusal, refusal_words
from dfil.contracts.failure import WORDED, is_failure, read_record
from dfil.contracts.rundir import METRICS, RESUME, SUMMARY

#: The run directory's memory plan (dfil.train.memory.PLAN; train/ is a higher layer).
PLAN = "memory_plan.json"


def cell_status(run_dir: Path, train_log: str, eval_log: str) -> tuple[str, str] | None:
    """(reason, log) of an unfinished cell; None when it finished."""
    refused = read_refusal(run_dir)
    for name, log in ((METRICS, eval_log), (SUMMARY, train_log)):
        record = read_record(run_dir / name)
        if is_failure(record):
            failed = record["failed"]
            why = failed["message"] if failed["reason"] in WORDED else failed["reason"]
            # an evaluation copies its training's failure: that one's log says why
            return why, failed.get("log") or (train_log if failed.get("stage") == "train"
                                              else log)
        if name == METRICS and record is not None:
            return None
        if name == SUMMARY and record is not None:
            if refused is not None and refused.get("rule") == "evaluate_cell":
                return refusal_words(refused), eval_log
            return "trained, not evaluated", eval_log
    if refused is not None and refused.get("rule") != "evaluate_cell":
        return refusal_words(refused), train_log
    if (run_dir / PLAN).is_file():
        return "OOM (the retry uses the memory plan)", train_log
    if (run_dir / RESUME).is_file():
        return "interrupted (TIMEOUT or preempted; the retry resumes)", train_log
    if run_dir.is_dir():
        return "error or running (no output yet)", train_log
    return "not started", train_log


def unfinished(grid) -> dict[str, tuple[str, str]]:
    """Run key -> (reason, log) for every unfinished cell of ``grid``, in key order."""
    found = {key: cell_status(Path(grid.results) / "runs" / key,
                              f"{grid.results}/logs/train/{key}.log",
                              f"{grid.results}/logs/evaluate/{key}.log")
             for key in sorted(grid.cells)}
    return {key: why for key, why in found.items() if why is not None}


def status_lines(grid) -> list[str]:
    """One line per unfinished cell of ``grid``: key, reason, log; then a count."""
    left = unfinished(grid)
    return [f"{key}: {reason} (log: {log})" for key, (reason, log) in left.items()] + [
        f"{len(left)} of {len(grid.cells)} cells unfinished"]
