"""The workflow's hub fetches (dry runs): one fetch job per hub backbone however many
cells read it, upstream of their training and evaluation, at the lock file's commit; a
grid naming a branch without a lock entry stops at DAG build naming `dfil grid lock`."""

from __future__ import annotations

import re

import pytest
import yaml

from dfil.config.pins import write_lock
from snakemake_cli import snakemake
from test_pins import COMMIT_A, hub_grid
from test_workflow import counts


def grid_file(tmp_path, lock: bool):
    lock_path = tmp_path / "hubdry.lock.yaml"
    if lock:
        write_lock(lock_path, {("model", "org/tiny", "main"): COMMIT_A}, "hubdry", "now")
    config = {**hub_grid("main", str(lock_path)), "name": "hubdry"}
    path = tmp_path / "hubdry.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow
def test_one_fetch_job_feeds_every_cell_at_the_locked_commit(tmp_path):
    out = snakemake("-n", "-p", "--forceall", "all_runs", "--cores", "1", "--configfile",
                    str(grid_file(tmp_path, lock=True)))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    c = counts(out.stdout)
    assert c["hub_fetch"] == 1
    assert c["train_cell"] > 1
    assert f"--repo org/tiny --revision {COMMIT_A} --label tiny-llama" in out.stdout
    assert "results/hubdry/hub/model/tiny-llama.json" in out.stdout


@pytest.mark.slow
def test_an_unlocked_branch_stops_the_dag_build_naming_the_command(tmp_path):
    """A run that would run jobs stops before its DAG; a dry run shows the plan with the
    branch as named and says the real run will be refused."""
    grid = str(grid_file(tmp_path, lock=False))
    out = snakemake("all_runs", "--cores", "1", "--configfile", grid)
    assert out.returncode != 0
    assert "backbones.tiny-llama.revision: 'main' is a branch or tag" in out.stdout + out.stderr
    assert "dfil grid lock --config" in out.stdout + out.stderr
    assert not (tmp_path / "results").exists()
    plan = snakemake("-n", "-p", "all_runs", "--cores", "1", "--configfile", grid)
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "a real run is refused until `dfil grid lock --config" in plan.stderr
    assert "--revision main" in plan.stdout + plan.stderr


def _resources(text: str, rule: str) -> str:
    """The ``resources:`` line of ``rule``'s one job in a dry run's output."""
    block = text.split(f"\nrule {rule}:\n", 1)[1].split("\n\n", 1)[0]
    return re.search(r"resources: (.*)", block).group(1)


@pytest.mark.slow
def test_a_job_that_only_records_a_failure_asks_for_no_gpu(tmp_path):
    """Once its inputs exist, Snakemake asks a job's resources again: a cell whose
    backbone's fetch was refused (the stamp holds the refusal) trains with the cpu class
    (gpu=0), and the evaluation of a failed training too; with a good stamp the training
    asks for the tiny class's GPU (smoke.yaml: gpu 1, h100)."""
    import json
    import shutil

    from dfil.contracts.failure import failure_record, write_failure
    from snakemake_cli import ROOT
    from test_pins import KEY

    work = tmp_path / "wf"
    work.mkdir()
    shutil.copy(ROOT / "Snakefile", work)
    for d in ("workflow", "config"):
        shutil.copytree(ROOT / d, work / d)
    grid = str(grid_file(tmp_path, lock=True))
    run = work / "results" / "hubdry" / "runs" / KEY
    stamp = work / "results" / "hubdry" / "hub" / "model" / "tiny-llama.json"

    def dry(target: str) -> str:
        out = snakemake(target, "-n", "--cores", "1", "--configfile", grid, cwd=work)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
        return out.stdout

    built = snakemake(f"{run.relative_to(work)}/cell.yaml", "--cores", "1", "--configfile",
                      grid, cwd=work)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    stamp.parent.mkdir(parents=True)
    stamp.write_text(json.dumps({"repo": "org/tiny", "commit": COMMIT_A, "files": {}}))
    summary = f"{run.relative_to(work)}/train_summary.json"
    assert re.search(r"\bgpu=1\b", _resources(dry(summary), "train_cell"))
    stamp.write_text(json.dumps({"repo": "org/tiny", "gated": "backbone tiny-llama is gated"}))
    train = _resources(dry(summary), "train_cell")
    assert re.search(r"\bgpu=0\b", train) and "h100" not in train, train
    assert "mem_mb=4000" in train and "runtime=30" in train
    write_failure(run / "train_summary.json", failure_record("cell", "0" * 16, {
        "reason": "OOM", "stage": "train", "message": "out of memory", "log": "",
        "attempt": 3}))
    stamp.write_text(json.dumps({"repo": "org/tiny", "commit": COMMIT_A, "files": {}}))
    evaluate = _resources(dry(f"{run.relative_to(work)}/metrics.json"), "evaluate_cell")
    assert re.search(r"\bgpu=0\b", evaluate) and "h100" not in evaluate, evaluate


def test_ci_hub_grid_reads_one_backbone_and_one_dataset_in_every_cell():
    """config/hub-smoke.yaml, .ci/hub-smoke's grid (run there for real through a local
    endpoint), stays valid: several cells, each reading the same two hub repos."""
    import subprocess

    from dfil.config.grid import Grid
    from dfil.config.yamlfile import load_yaml
    from snakemake_cli import ROOT

    grid = Grid(load_yaml(ROOT / "config" / "hub-smoke.yaml"))
    assert len(grid.cells) == 4  # .ci/hub-smoke counts 4 training and 4 evaluation jobs
    assert {c.fetches for c in grid.cells.values()} == {(("dataset", "frog"),
                                                         ("model", "tiny-llama"))}
    # branches, which the stage locks through the endpoint
    assert sorted((p.repo, p.revision) for p, _ in grid.pins.values()) == [
        ("dfil-test/frog-samples", "main"), ("dfil-test/tiny-llama", "main")]
    out = subprocess.run(["bash", "-n", str(ROOT / ".ci" / "hub-smoke")], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
