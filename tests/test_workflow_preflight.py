"""``snakemake preflight --profile slurm``: ``dfil grid preflight`` with the profile's
account and partitions, run inside Snakemake before any DAG is built: it submits nothing,
fails once with the preflight's status when a check fails, and runs on a grid whose
branches are not locked yet (reporting them); a dry run shows the rule.

SLURM's commands are shell scripts printing hand-written SLURM 22.05 output (the real
cluster of workflow/slurm-local.sh is not started); ``sbatch`` records any call."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from snakemake_cli import BIN, ROOT, env
from test_workflow_hub import grid_file

SINFO = "cpu (null) (null) infinite 19284 2\\ngpu gpu:h100:2(S:0) (null) infinite 19284 2\\n"
#: workflow/slurm-local.sh's partitions: gpu takes only the QOS gpu.
SCONTROL = ("PartitionName=cpu Default=YES AllowQos=normal,gpu State=UP\\n"
            "PartitionName=gpu AllowQos=gpu State=UP\\n")
#: The QOS and their limits (``sacctmgr show qos``): gpu lets a user hold 2 GPUs.
QOS = "normal||||\\ngpu|02:00:00|gres/gpu=2||\\n"
SLURM_LOCAL = ("--profile", "slurm", "--profile", "workflow/profiles/slurm-local")


def site(tmp_path, accounts: str):
    """A copy of the workflow and a PATH whose sinfo/scontrol/sacctmgr answer as a cluster
    with ``accounts`` (``sacctmgr show assoc``'s lines) for this user; returns (work dir,
    environment, sbatch's call log)."""
    work = tmp_path / "wf"
    work.mkdir()
    shutil.copy(ROOT / "Snakefile", work)
    for d in ("workflow", "config", "slurm"):
        shutil.copytree(ROOT / d, work / d)
    shims = tmp_path / "slurm-bin"
    shims.mkdir()
    calls = tmp_path / "sbatch-calls"
    # sacct: the executor plugin refuses to start on a host without it (or squeue)
    sacctmgr = (f"case $4 in assoc) printf '{accounts}';; qos) printf '{QOS}';; "
                "user) echo dfil-local;; esac")
    scripts = {"sinfo": f"printf '{SINFO}'", "sacctmgr": sacctmgr,
               "scontrol": f"printf '{SCONTROL}'",
               "sbatch": f'echo "$@" >> {calls}; exit 1', "sacct": "exit 0"}
    for name, body in scripts.items():
        (shims / name).write_text(f"#!/bin/sh\n{body}\n")
        (shims / name).chmod(0o755)
    environ = env()
    environ["PATH"] = f"{shims}:{environ['PATH']}"
    environ["DFIL_HUB_CACHE"] = str(tmp_path / "hub-cache")
    return work, environ, calls


def run(work, environ, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "snakemake"), "preflight", *args], cwd=work,
                          env=environ, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_preflight_checks_the_profiles_site_and_submits_nothing(tmp_path):
    work, environ, calls = site(tmp_path, "dfil-local||gpu,normal|normal||\\n")
    done = run(work, environ, *SLURM_LOCAL, "--configfile", "config/smoke.yaml")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout + done.stderr
    assert "Building DAG" not in out, "the checks run before any DAG is built"
    for line in ("skipped  hub    the grid reads no hub backbone or dataset",
                 "ok       slurm  partition cpu (default-resources.slurm_partition) exists",
                 "ok       slurm  class tiny: gpu_model h100 is a GPU type in partition gpu",
                 *(f"ok       slurm  rule {rule} (class tiny): partition gpu (default-"
                   "resources.gpu_partition), account dfil-local (default-resources."
                   "slurm_account), qos gpu (default-resources.qos): allowed, and its job (30 "
                   "min, 4000 MB, 1 GPU) within the partition's and the QOS's limits"
                   for rule in ("train_cell", "train_pack", "evaluate_cell",
                                "frozen_features", "acceptance_run")),
                 # the smoke grid's pack: a seed's summary after it, train_cell as cpu
                 "ok       slurm  rule train_cell (class cpu): partition cpu (default-"
                 "resources.slurm_partition), account dfil-local (default-resources."
                 "slurm_account), qos gpu (default-resources.qos): allowed",
                 "ok       slurm  light jobs (every other rule) (class cpu): partition cpu"):
        assert line in out
    assert "preflight: all 10 checks ok" in out
    assert not calls.exists(), "preflight submitted a job"
    assert (work / "results/smoke/logs/preflight.log").read_text().startswith("skipped  hub")


@pytest.mark.slow
def test_a_failed_check_fails_the_target_once(tmp_path):
    work, environ, calls = site(tmp_path, "proj-ml|||||\\n")
    done = run(work, environ, *SLURM_LOCAL, "--configfile", "config/smoke.yaml")
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert ("PROBLEM  slurm  rule train_cell (class tiny): partition gpu (default-resources."
            "gpu_partition), account dfil-local (default-resources.slurm_account), qos gpu "
            "(default-resources.qos): account dfil-local (default-resources.slurm_account) is "
            "no association of the user on this partition") in out
    assert done.returncode == 3, "the preflight's own status: a check found a problem"
    # once each: class tiny, and class cpu (a seed's summary after its pack)
    assert out.count("PROBLEM  slurm  rule train_cell (class tiny)") == 1, "a check runs once"
    assert out.count("PROBLEM  slurm  rule train_cell (class cpu)") == 1
    assert not calls.exists()


@pytest.mark.slow
def test_an_unlocked_grid_is_checked_not_refused(tmp_path):
    """A real run of this grid stops before its DAG (test_workflow_hub); its preflight
    runs and names the lock command among its problems."""
    work, environ, _ = site(tmp_path, "dfil-local|||||\\n")
    environ["HF_ENDPOINT"] = "http://127.0.0.1:9"  # no hub: its check fails, fast
    grid = grid_file(tmp_path, lock=False)
    done = run(work, environ, "--cores", "1", "--configfile", str(grid))
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert "PROBLEM  lock   backbones.tiny-llama.revision: 'main' is a branch or tag" in out
    assert "Run `dfil grid lock --config" in out
    assert "PROBLEM  hub    backbone tiny-llama (org/tiny): cannot reach the hub" in out
    assert "no slurm_account or slurm_partition in the profile (none given with --profile" in out


def test_a_dry_run_shows_the_rule_and_runs_no_check(tmp_path):
    work, environ, calls = site(tmp_path, "dfil-local||gpu,normal|normal||\\n")
    done = run(work, environ, *SLURM_LOCAL, "--configfile", "config/smoke.yaml", "-n")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-3000:]
    assert "preflight" in out and "dfil grid preflight --config" in out
    assert "PROBLEM" not in out and "ok       slurm" not in out
    assert not calls.exists()
