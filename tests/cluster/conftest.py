"""SLURM's commands answered by hand: the preflight's checks run them through one runner,
which these tests replace."""

from __future__ import annotations

import subprocess

import pytest

from dfil.cluster import slurm as cluster


@pytest.fixture
def fake_slurm(monkeypatch):
    """A function taking ``outputs[command] = (rc, stdout, stderr)`` (by the command's
    name, or by its first two words: ``"sacctmgr qos"``) that puts every SLURM command on
    PATH and returns (the runner, the commands it ran)."""

    def make(outputs: dict[str, tuple[int, str, str]]):
        monkeypatch.setattr(cluster.shutil, "which", lambda name: f"/usr/bin/{name}")
        monkeypatch.setattr(cluster.getpass, "getuser", lambda: "ada")
        calls = []

        def run(cmd):
            calls.append(cmd)
            key = f"{cmd[0]} {cmd[4]}" if cmd[0] == "sacctmgr" else cmd[0]
            rc, out, err = outputs.get(key, outputs.get(cmd[0], (1, "", "not answered")))
            return subprocess.CompletedProcess(cmd, rc, out, err)
        return run, calls
    return make
