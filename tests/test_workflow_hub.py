"""The workflow's hub fetches (dry runs): one fetch job per hub backbone however many
cells read it, upstream of their training and evaluation, at the lock file's commit; a
grid naming a branch without a lock entry stops at DAG build naming `dfil grid lock`."""

from __future__ import annotations

import yaml

from dfil.gridlock import write_lock
from snakemake_cli import snakemake
from test_gridlock import COMMIT_A, hub_grid
from test_workflow import counts


def grid_file(tmp_path, lock: bool):
    lock_path = tmp_path / "hubdry.lock.yaml"
    if lock:
        write_lock(lock_path, {("model", "org/tiny", "main"): COMMIT_A}, "hubdry", "now")
    config = {**hub_grid("main", str(lock_path)), "name": "hubdry"}
    path = tmp_path / "hubdry.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_one_fetch_job_feeds_every_cell_at_the_locked_commit(tmp_path):
    out = snakemake("-n", "-p", "--forceall", "all_runs", "--cores", "1", "--configfile",
                    str(grid_file(tmp_path, lock=True)))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    c = counts(out.stdout)
    assert c["hub_fetch"] == 1
    assert c["train_cell"] > 1
    assert f"--repo org/tiny --revision {COMMIT_A} --label tiny-llama" in out.stdout
    assert "results/hubdry/hub/model/tiny-llama.json" in out.stdout


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


def test_ci_hub_grid_reads_one_backbone_and_one_dataset_in_every_cell():
    """config/hub-smoke.yaml, .ci/hub-smoke's grid (run there for real through a local
    endpoint), stays valid: several cells, each reading the same two hub repos."""
    import subprocess

    from dfil.grid import Grid
    from dfil.yamlfile import load_yaml
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
