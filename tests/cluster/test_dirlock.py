"""After a killed Snakemake run: advice about its directory lock and incomplete files,
naming the command the user ran; its dfil jobs stop with it."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dfil.cluster.dirlock import (
    flags,
    incomplete_files,
    incomplete_hint,
    lock_hint,
    other_snakemakes,
    rerun_incomplete_set,
    stop_with_snakemake,
    takes_lock,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def locked(tmp_path: Path) -> Path:
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.output.lock").write_text("results/x\n")
    return tmp_path


def test_lock_hint_without_locks_says_nothing(tmp_path):
    assert lock_hint(tmp_path, ["snakemake", "all_tables"]) is None


def test_lock_hint_after_a_killed_run_says_unlock(tmp_path):
    hint = lock_hint(locked(tmp_path), ["snakemake", "all_tables", "--profile", "slurm"])
    assert "--unlock" in hint and "no Snakemake is running here" in hint


def test_lock_hint_names_the_command_the_user_ran(tmp_path):
    argv = ["/venv/bin/snakemake", "all_tables", "--cores", "2", "--configfile=config/smoke.yaml"]
    hint = lock_hint(locked(tmp_path), argv)
    assert ("`snakemake all_tables --cores 2 --configfile=config/smoke.yaml --unlock`" in hint)
    # A local run has no profile setting rerun-incomplete: the rerun command adds it.
    assert "run `snakemake all_tables --cores 2 --configfile=config/smoke.yaml " \
           "--rerun-incomplete`" in hint
    assert "--profile slurm" not in hint


def test_rerun_incomplete_is_read_from_the_flags_and_a_named_profile(tmp_path):
    (tmp_path / "prof").mkdir()
    (tmp_path / "prof" / "config.yaml").write_text("rerun-incomplete: true\n")
    assert rerun_incomplete_set(["snakemake", "--ri"], tmp_path)
    assert rerun_incomplete_set(["snakemake", "--profile", "prof"], tmp_path)
    assert rerun_incomplete_set(["snakemake", "--profile=prof"], tmp_path)
    assert not rerun_incomplete_set(["snakemake", "--profile", "missing"], tmp_path)
    assert not rerun_incomplete_set(["snakemake", "all_tables"], tmp_path)
    hint = lock_hint(locked(tmp_path), ["snakemake", "all_tables", "--profile", "prof"])
    assert "then run `snakemake all_tables --profile prof`:" in hint
    # The project's slurm profile sets it.
    assert rerun_incomplete_set(["snakemake", "--profile", "slurm"], Path(__file__).parents[2])


def test_flags_split_clusters_of_short_options(tmp_path):
    assert flags(["snakemake", "-np", "--cores=2", "target"]) == {"-n", "-p", "--cores"}
    assert not takes_lock(["snakemake", "-np"])  # a dry run
    assert lock_hint(locked(tmp_path), ["snakemake", "-lp"]) is None  # --list-rules


def mark_incomplete(workdir: Path, path: str) -> None:
    """What Snakemake writes for an output of a job that is running (persistence/file.py):
    the path, urlsafe base64, split into chunks of at most 254 characters."""
    import base64

    b64 = base64.urlsafe_b64encode(path.encode()).decode()
    chunks = [b64[i:i + 254] for i in range(0, len(b64), 254)]
    marker = workdir / ".snakemake" / "incomplete" / Path(*["@" + c for c in chunks[:-1]],
                                                          chunks[-1])
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text('{"external_jobid": null}')


def test_incomplete_hint_names_the_files_and_the_command(tmp_path):
    long = "results/smoke/runs/" + "x/" * 150 + "train_summary.json"
    for path in ("results/smoke/aggregate/metrics.parquet", long, "results/gone.json"):
        mark_incomplete(tmp_path, path)
        if path != "results/gone.json":
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text("half")
    assert sorted(incomplete_files(tmp_path)) == sorted(
        ["results/smoke/aggregate/metrics.parquet", long])
    argv = ["snakemake", "all_tables", "--cores", "2"]
    hint = incomplete_hint(tmp_path, argv)
    assert "left 2 incomplete file(s)" in hint and "\n" not in hint
    assert "run `snakemake all_tables --cores 2 --rerun-incomplete`" in hint
    assert incomplete_hint(tmp_path, [*argv, "--rerun-incomplete"]) is None
    assert incomplete_hint(tmp_path, [*argv, "-n"]) is None
    assert incomplete_hint(tmp_path / "clean", argv) is None


@pytest.mark.parametrize("flag", ["--unlock", "--nolock", "--list-rules"])
def test_lock_hint_is_silent_for_runs_that_take_no_lock(tmp_path, flag):
    assert lock_hint(locked(tmp_path), ["snakemake", "all_tables", flag]) is None


@pytest.mark.parametrize("flag", ["-n", "--dry-run"])
def test_a_dry_run_stops_at_the_lock_too_and_gets_the_hint(tmp_path, flag):
    """Snakemake refuses a dry run while a killed run's lock is left."""
    hint = lock_hint(locked(tmp_path), ["snakemake", "all_tables", flag])
    assert "`snakemake all_tables --unlock`" in hint
    assert f"run `snakemake all_tables {flag} --rerun-incomplete`" in hint


@pytest.mark.slow
def test_lock_hint_names_a_snakemake_that_still_runs(tmp_path):
    fake = tmp_path / "bin" / "snakemake"  # argv[0] ends in "snakemake", like the real one
    fake.parent.mkdir()
    fake.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(fake), "30"], cwd=locked(tmp_path))
    try:
        for _ in range(50):
            if proc.pid in other_snakemakes(tmp_path):
                break
            time.sleep(0.05)
        hint = lock_hint(tmp_path, ["snakemake", "all_tables"])
        assert f"pid {proc.pid}" in hint and "--unlock" not in hint
    finally:
        proc.kill()
        proc.wait()


def test_other_snakemakes_leaves_out_this_process_and_its_parents(tmp_path):
    assert os.getpid() not in other_snakemakes(Path.cwd())
    assert other_snakemakes(tmp_path) == []


@pytest.mark.slow
def test_a_dfil_job_stops_when_the_snakemake_that_started_it_is_killed(tmp_path):
    """A fake ``snakemake`` (its argv[1] ends in /snakemake) starts a job the way a local
    Snakemake does (bash -c, then the job); killing it with SIGKILL makes the job get
    SIGTERM from its watcher, which a dfil job turns into a clean stop."""
    import textwrap

    job = tmp_path / "job.py"
    job.write_text(textwrap.dedent("""
        import signal, sys, time
        from dfil.cluster.dirlock import snakemake_ancestor, stop_with_snakemake
        signal.signal(signal.SIGTERM, lambda *a: (print("stopped", flush=True), sys.exit(143)))
        assert stop_with_snakemake(print, interval=0.1) is not None
        print("watching", snakemake_ancestor(), flush=True)
        time.sleep(60)
    """))
    fake = tmp_path / "snakemake"
    fake.write_text(textwrap.dedent(f"""
        import subprocess, sys, time
        subprocess.Popen(["bash", "-c", "{sys.executable} {job} > {tmp_path / 'job.log'}"])
        time.sleep(60)
    """))
    smk = subprocess.Popen([sys.executable, str(fake)])
    log = tmp_path / "job.log"
    try:
        for _ in range(300):
            if log.exists() and "watching" in log.read_text():
                break
            time.sleep(0.1)
        assert log.read_text().split() == ["watching", str(smk.pid)]
        smk.kill()
        smk.wait()
        for _ in range(300):
            if "stopped" in log.read_text():
                break
            time.sleep(0.1)
        assert log.read_text().splitlines()[1:] == [
            f"the Snakemake that started this job (pid {smk.pid}) is gone: stopping", "stopped"]
    finally:
        smk.kill()


def test_nothing_to_watch_outside_a_local_snakemake():
    assert stop_with_snakemake(print) is None  # pytest's ancestors hold no Snakemake
