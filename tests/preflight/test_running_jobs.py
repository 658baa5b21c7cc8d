"""The ``dfil`` jobs found writing run directories before the DAG is built: a job of the
build running in this directory is described as running and left alone; only a job no
Snakemake here owns is one an earlier run left, which the note offers to stop."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from dfil.config.grid import load_grid_files
from dfil.preflight import preflight, running_note

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "config" / "smoke.yaml"
HOLDER = {"pid": 777, "host": "node1", "command": "dfil train", "started": "09:00:00"}


def test_a_job_of_the_running_build_is_running_and_never_to_be_killed():
    note = running_note("frog/x/seed1", HOLDER, [4321])
    assert note == ("dfil: pid 777 on node1 (dfil train, cell frog/x/seed1, since 09:00:00) "
                    "is a job of the Snakemake build running in this directory (pid 4321): "
                    "this run's job for that cell fails at once while it runs; let that "
                    "build finish, then rerun this command")
    assert "kill" not in note and "earlier run" not in note


def test_a_job_no_snakemake_here_owns_was_left_by_an_earlier_run():
    assert running_note("frog/x/seed1", HOLDER) == (
        "dfil: pid 777 on node1 (dfil train, cell frog/x/seed1, since 09:00:00) still writes "
        "its run directory, left from an earlier run: this run's job for that cell fails at "
        "once while it does; wait for it, or stop it (kill 777) and rerun")


@pytest.fixture
def build(tmp_path):
    """A Snakemake (by its argv[0]) running in ``tmp_path`` and one of its ``dfil`` jobs
    holding a cell's writer lock; both stopped after the test."""
    grid = load_grid_files([SMOKE])
    key = sorted(grid.cells)[0]
    run = tmp_path / grid.results / "runs" / key
    snakemake = subprocess.Popen(["bash", "-c", "exec -a snakemake sleep 120"], cwd=tmp_path)
    job = subprocess.Popen([sys.executable, "-c", (
        "import time\nfrom dfil.cluster.writer import hold_writer\n"
        f"with hold_writer({str(run)!r}, 'dfil train'):\n    print('held', flush=True)\n"
        "    time.sleep(120)")], stdout=subprocess.PIPE, text=True)
    try:
        assert job.stdout.readline() == "held\n"
        yield grid, key, snakemake.pid, job.pid
    finally:
        for proc in (job, snakemake):
            proc.kill()
            proc.wait()


def test_preflight_names_the_running_build_of_a_second_snakemake(tmp_path, build):
    grid, key, snakemake, job = build
    time.sleep(0.2)  # exec -a has replaced bash
    notes = preflight(grid, ["snakemake", "--cores", "1", "all_tables"], tmp_path,
                      [str(SMOKE)], [])
    (note,) = [n for n in notes if f"pid {job} " in n]
    assert f"cell {key}, since " in note
    assert note.endswith(f"is a job of the Snakemake build running in this directory (pid "
                         f"{snakemake}): this run's job for that cell fails at once while it "
                         "runs; let that build finish, then rerun this command")
