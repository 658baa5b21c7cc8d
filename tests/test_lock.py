"""The project's one lock (dfil.util.lock): a second process waits (saying so) or is
refused at once, the holder record is there while held and gone after, and the lock
file's mode is a new file's."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dfil.util.lock import LockBusy, hold, lock_mode, read_holder


def holder_process(path: Path, seconds: float) -> subprocess.Popen:
    """A child that holds the lock on ``path`` for ``seconds`` (it prints "held")."""
    script = textwrap.dedent(f"""
        import time
        from dfil.util.lock import hold
        with hold({str(path)!r}, holder={{"who": "child"}}):
            print("held", flush=True)
            time.sleep({seconds})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_the_holder_record_is_there_while_held_and_gone_after(tmp_path):
    path = tmp_path / "dir" / "x.lock"
    with hold(path, holder={"pid": 7, "host": "h"}) as held:
        assert held == path
        assert path.read_text() == json.dumps({"host": "h", "pid": 7}) + "\n"
        assert read_holder(path) == {"pid": 7, "host": "h"}
    assert path.read_text() == "" and read_holder(path) is None


def test_a_second_process_is_refused_at_once_or_waits_saying_so(tmp_path, capsys):
    path = tmp_path / "x.lock"
    proc = holder_process(path, 1.5)
    try:
        with pytest.raises(LockBusy) as busy, hold(path, wait=False):
            pass
        assert busy.value.path == path
        assert read_holder(path) == {"who": "child"}
        with hold(path, waiting="waiting for the child"):
            assert read_holder(path) is None  # the child released it, its record emptied
        assert capsys.readouterr().err == "dfil: waiting for the child\n"
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_file_gets_a_new_files_mode(tmp_path):
    old = os.umask(0o002)
    try:
        assert lock_mode() == 0o664
        with hold(tmp_path / "x.lock"):
            assert (tmp_path / "x.lock").stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old)
