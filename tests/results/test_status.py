"""dfil grid status: every unfinished cell with its reason and the log to read."""

from __future__ import annotations

import json

from dfil.config.grid import Grid
from dfil.contracts.failure import failure_record, write_failure
from dfil.results.status import status_lines
from test_grid import smoke

OOM = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
TIMEOUT = "frog/tiny-llama/coral/lamna/nfull/na/seed42"
RETRYING = "frog/tiny-llama/corn/lamna/nfull/na/seed42"
DONE = "frog/tiny-llama/finetune/lamna/nfull/na/seed42"
DIVERGED = "frog/tiny-llama/corn/lamna/nfull/na/seed42"


def test_unfinished_cells_are_listed_with_reason_and_log(tmp_path):
    grid = Grid(smoke(), results_root=str(tmp_path))
    runs = tmp_path / "smoke" / "runs"
    for key in (OOM, TIMEOUT, RETRYING, DONE):
        (runs / key).mkdir(parents=True)
    write_failure(runs / OOM / "metrics.json", failure_record("c", "0" * 16, {
        "reason": "OOM", "stage": "train", "message": "CUDA out of memory",
        "log": "logs/train/oom.log", "attempt": 3}))
    write_failure(runs / TIMEOUT / "train_summary.json", failure_record("c", "0" * 16, {
        "reason": "TIMEOUT", "stage": "train", "message": "SIGTERM", "log": "", "attempt": 2}))
    (runs / RETRYING / "resume.pt").write_bytes(b"state")
    (runs / DONE / "metrics.json").write_text(json.dumps({"test": {}}))
    lines = status_lines(grid)
    by_key = {line.split(": ", 1)[0]: line for line in lines[:-1]}
    assert by_key[OOM] == f"{OOM}: OOM (log: logs/train/oom.log)"
    assert by_key[TIMEOUT] == (f"{TIMEOUT}: TIMEOUT (log: {tmp_path}/smoke/logs/train/"
                               f"{TIMEOUT}.log)")
    assert "interrupted" in by_key[RETRYING]
    assert DONE not in by_key
    assert lines[-1] == f"{len(grid.cells) - 1} of {len(grid.cells)} cells unfinished"
    assert sum("not started" in line for line in lines) == len(grid.cells) - 4


def test_a_diverged_cell_is_listed_with_its_first_bad_step_and_remedy(tmp_path):
    """A deterministic failure's line is its message (where, and what to change), not a
    bare reason."""
    grid = Grid(smoke(), results_root=str(tmp_path))
    run = tmp_path / "smoke" / "runs" / DIVERGED
    run.mkdir(parents=True)
    message = ("non-finite loss: the training loss is NaN or infinite, first at epoch 2, "
               "step 7: the run diverged; lower the learning rates (train.lr_lora)")
    write_failure(run / "train_summary.json", failure_record("c", "0" * 16, {
        "reason": "non-finite loss", "stage": "train", "message": message,
        "log": "logs/train/d.log", "attempt": 1}))
    by_key = {line.split(": ", 1)[0]: line for line in status_lines(grid)[:-1]}
    assert by_key[DIVERGED] == f"{DIVERGED}: {message} (log: logs/train/d.log)"
