"""One writer per run directory: a second writer fails at once naming the first; the lock
goes when its holder dies, however it dies."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dfil.cli import main
from dfil.cluster.writer import (
    WRITER_FILE,
    hold_writer,
    holder_record,
    is_alive,
    read_holder,
    running_writers,
)
from dfil.util.errors import RunBusyError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def holding(run: Path, command: str = "dfil train") -> subprocess.Popen:
    """A child process that holds ``run``'s lock until killed (it prints "held")."""
    script = textwrap.dedent(f"""
        import time
        from dfil.cluster.writer import hold_writer
        with hold_writer({str(run)!r}, {command!r}):
            print("held", flush=True)
            time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.mark.slow
def test_run_lock_names_the_holder_to_a_second_writer(tmp_path):
    run = tmp_path / "run"
    proc = holding(run)
    try:
        with pytest.raises(RunBusyError) as err, hold_writer(run, "dfil evaluate"):
            pass
        message = str(err.value)
        assert message.startswith(f"{run}: another process writes this run directory: pid "
                                  f"{proc.pid} on ")
        assert "(dfil train, since " in message and f"kill {proc.pid}" in message
        assert "\n" not in message
        assert [(d, h["pid"]) for d, h in running_writers([run, tmp_path / "none"])] == [
            (run, proc.pid)]
    finally:
        proc.kill()
        proc.wait()
    # SIGKILL leaves the file (it names the last holder) but not the lock.
    assert (run / WRITER_FILE).exists() and is_alive(read_holder(run)) is False
    assert running_writers([run]) == []
    with hold_writer(run, "dfil evaluate") as path:
        assert read_holder(run)["command"] == "dfil evaluate" and path.exists()
    assert read_holder(run) is None  # a holder that ends empties it
    assert running_writers([run]) == []


def test_the_holder_record_names_the_slurm_job(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    record = holder_record("dfil train")
    assert record["slurm_job_id"] == "4242" and record["pid"] == os.getpid()
    assert is_alive(record) is True
    assert is_alive({**record, "host": "elsewhere"}) is None  # cannot be checked from here
    assert is_alive({**record, "pid_start": -1}) is False  # the pid was reused


@pytest.mark.slow
def test_dfil_train_refuses_a_run_directory_another_process_writes(tmp_path, capsys):
    run = tmp_path / "run"
    proc = holding(run, "dfil train")
    try:
        cell = tmp_path / "cell.yaml"
        cell.write_text("name: x\n")
        assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
        assert main(["evaluate", "--run", str(run)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 2
        assert all(f"another process writes this run directory: pid {proc.pid}" in line
                   for line in err)
        assert err[0].startswith("dfil train: error: ")
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_file_honours_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        with hold_writer(tmp_path / "run", "dfil train") as path:
            assert path.stat().st_mode & 0o777 == 0o640
            assert json.loads(path.read_text())["command"] == "dfil train"
    finally:
        os.umask(old)


def test_a_filesystem_without_locks_runs_unguarded_and_says_so(tmp_path, monkeypatch,
                                                                capsys):
    """flock refused with ENOLCK (NFS without its lock daemon): the block runs, one line
    on stderr says nothing stops a second writer; any other error is raised."""
    import errno

    import dfil.util.lock as lock

    class NoLocks:
        def __init__(self, path, **kwargs):
            self.error = OSError(errno.ENOLCK, "No locks available")

        def acquire(self, timeout):
            raise self.error

    monkeypatch.setattr(lock, "FileLock", NoLocks)
    ran = []
    with hold_writer(tmp_path / "run", "dfil train") as path:
        ran.append(path)
    assert ran == [tmp_path / "run" / WRITER_FILE]
    err = capsys.readouterr().err
    assert err == (f"dfil: {ran[0]}: this filesystem takes no file locks ([Errno "
                   f"{errno.ENOLCK}] No locks available); nothing stops a second writer "
                   "of this run directory\n")
    NoLocks.__init__ = lambda self, path, **kwargs: setattr(  # noqa: B010
        self, "error", PermissionError(errno.EACCES, "Permission denied"))
    with pytest.raises(PermissionError), hold_writer(tmp_path / "run", "dfil train"):
        pass


def test_a_full_disk_at_the_holder_record_names_the_lock_file(tmp_path, monkeypatch):
    import errno

    from dfil.util.errors import DiskFullError

    def full(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("dfil.util.lock.os.write", full)
    with pytest.raises(DiskFullError, match=f"^{tmp_path / 'run' / WRITER_FILE}: no space left"):
        with hold_writer(tmp_path / "run", "dfil evaluate"):
            pass
    assert read_holder(tmp_path / "run") is None  # released, and names no one
