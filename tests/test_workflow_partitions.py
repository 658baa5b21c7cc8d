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
FROZEN = "frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42"  # reads cached features
UNTRAINED = "frog/tiny-llama/zero_shot/lamna/nfull/na/seedna"  # its "training": cpu class


def dry_run(work, environ, keys=(KEY,)) -> str:
    """A dry run's output for ``keys``' metrics.json, its shell commands printed."""
    done = subprocess.run(
        [str(BIN / "snakemake"), "-n", "-p", *SLURM_LOCAL, "--configfile=config/smoke.yaml",
         *(f"results/smoke/runs/{key}/metrics.json" for key in keys)], cwd=work, env=environ,
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def dry_run_resources(work, environ, keys=(KEY,)) -> dict[str, dict[str, str]]:
    """Each rule's resources in a dry run of ``keys``' metrics.json, by rule name."""
    return rule_resources(dry_run(work, environ, keys))


def rule_resources(text: str) -> dict[str, dict[str, str]]:
    """Each rule's resources in a dry run's output ``text``, by rule name."""
    out, rule = {}, None
    for line in text.splitlines():
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


@pytest.mark.slow
def test_a_class_without_cpus_per_task_runs_its_jobs_on_one_thread(tmp_path):
    """A size class may leave ``cpus_per_task`` out (here the tiny class) or set it to
    null (the cpu class): its jobs then ask one CPU (SLURM's own default) and run with
    OMP_NUM_THREADS=1, never 0 or None; the frozen-feature job takes its class and
    partition as the training and evaluation jobs do."""
    work, environ, _ = site(tmp_path, "dfil-local|gpu,normal\\n")
    grid = work / "config/smoke.yaml"
    text = grid.read_text()
    tiny = "tiny: {gpu: 1, gpu_model: h100, mem_mb: 4000, runtime: 30, cpus_per_task: 1}"
    assert tiny in text
    cpu = "cpu: {gpu: 0, mem_mb: 4000, runtime: 30, cpus_per_task: 1}"
    assert cpu in text
    grid.write_text(text.replace(tiny, tiny.replace(", cpus_per_task: 1", "")).replace(
        cpu, cpu.replace("cpus_per_task: 1", "cpus_per_task: null")))
    text = dry_run(work, environ, (FROZEN, UNTRAINED))
    res = rule_resources(text)
    for rule in ("train_pack", "train_cell", "evaluate_cell", "frozen_features"):
        assert res[rule]["cpus_per_task"] == "1", (rule, res[rule])
        assert (res[rule]["slurm_partition"], res[rule]["gpu"]) == ("gpu", "1"), rule
    for rule in ("untrained_cell", "cell_config"):  # light: the cpu class
        assert (res[rule]["cpus_per_task"], res[rule]["gpu"]) == ("1", "0"), (rule, res[rule])
    commands = [line for line in text.splitlines() if "OMP_NUM_THREADS=" in line]
    assert commands and all("OMP_NUM_THREADS=1 " in line for line in commands), commands
