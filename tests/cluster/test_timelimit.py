"""dfil.cluster.timelimit: a SIGTERM at the SLURM time limit is told from a preemption by
the job's time left (squeue's %L), asked once."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from dfil.cluster.timelimit import NEAR, at_time_limit, time_left


def squeue(stdout: str, returncode: int = 0, calls: list | None = None):
    def run(argv, **kwargs):
        if calls is not None:
            calls.append(argv)
        return SimpleNamespace(stdout=stdout, returncode=returncode)
    return run


def test_the_job_asks_squeue_for_itself_once():
    calls: list = []
    assert time_left({"SLURM_JOB_ID": "77"}, squeue("4:10\n", calls=calls)) == 250
    assert calls == [["squeue", "-h", "-j", "77", "-o", "%L"]]


def test_near_the_limit_is_a_timeout_far_from_it_a_preemption():
    job = {"SLURM_JOB_ID": "77"}
    assert at_time_limit(job, squeue("5:00"))            # the profile's TERM@300
    assert at_time_limit(job, squeue("0:00"))            # the limit itself
    assert not at_time_limit(job, squeue(f"{NEAR // 60 + 1}:00"))
    assert not at_time_limit(job, squeue("3:10:00"))     # preempted hours early


def test_outside_slurm_or_without_an_answer_it_is_no_timeout():
    assert not at_time_limit({}, squeue("0:00"))
    assert not at_time_limit({"SLURM_JOB_ID": "77"}, squeue("", returncode=1))

    def missing(argv, **kwargs):
        raise FileNotFoundError(argv[0])
    assert not at_time_limit({"SLURM_JOB_ID": "77"}, missing)


def test_a_real_squeue_that_fails_is_no_timeout(tmp_path, monkeypatch):
    """The thin call really runs a program named squeue (here one that fails)."""
    fake = tmp_path / "squeue"
    fake.write_text(f"#!{sys.executable}\nimport sys; sys.exit('no such job')\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert time_left({"SLURM_JOB_ID": "1"}, subprocess.run) is None
