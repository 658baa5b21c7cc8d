"""The partition Snakemake gives a training or evaluation job through the slurm profile
(read from a dry run's job resources): the GPU partition for a job that trains, the CPU
partition for one that only records a failure.

SLURM's commands are the tests' failing stubs, with ``sacct`` answering (the executor
plugin looks for it before the dry run); nothing is submitted."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from dfil.contracts.failure import failure_record
from snakemake_cli import BIN
from test_workflow_preflight import SLURM_LOCAL, site

KEY = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"


def dry_run_resources(work, environ) -> dict[str, dict[str, str]]:
    """Each rule's resources in a dry run of KEY's metrics.json, by rule name."""
    done = subprocess.run(
        [str(BIN / "snakemake"), "-n", *SLURM_LOCAL, "--configfile=config/smoke.yaml",
         f"results/smoke/runs/{KEY}/metrics.json"], cwd=work, env=environ,
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out, rule = {}, None
    for line in done.stdout.splitlines():
        if m := re.match(r"(?:local)?rule (\w+):", line):
            rule = m.group(1)
        elif rule and (m := re.match(r"\s+resources: (.*)", line)):
            out[rule] = dict(kv.split("=", 1) for kv in m.group(1).split(", "))
    return out


@pytest.mark.slow
def test_a_failure_only_evaluation_queues_on_the_cpu_partition(tmp_path):
    """smoke.yaml's tiny class asks 1 h100; the overlay profile names cpu and gpu."""
    work, environ, _ = site(tmp_path, "dfil-local|gpu,normal\\n")
    res = dry_run_resources(work, environ)
    assert (res["train_cell"]["slurm_partition"], res["train_cell"]["gpu"]) == ("gpu", "1")
    assert res["evaluate_cell"]["slurm_partition"] == "gpu"
    # The training gave up on its last attempt: its summary is a failure record, and the
    # evaluation that copies it asks for no GPU and goes to the CPU partition.
    run = work / "results/smoke/runs" / KEY
    run.mkdir(parents=True)
    record = failure_record(KEY, "0" * 16, {"reason": "OOM", "stage": "train",
                                            "message": "CUDA out of memory", "log": "l",
                                            "attempt": 3})
    (run / "train_summary.json").write_text(json.dumps(record))
    res = dry_run_resources(work, environ)
    evaluate = res["evaluate_cell"]
    assert (evaluate["slurm_partition"], evaluate["gpu"]) == ("cpu", "0")
    assert evaluate.get("gpu_model", "") == ""  # no GPU type asked either
