"""lock_hint: advice when a killed Snakemake run left its directory lock behind."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dfil.locks import lock_hint, other_snakemakes

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


@pytest.mark.parametrize("flag", ["--unlock", "-n", "--dry-run", "--nolock"])
def test_lock_hint_is_silent_for_runs_that_take_no_lock(tmp_path, flag):
    assert lock_hint(locked(tmp_path), ["snakemake", "all_tables", flag]) is None


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
