"""The test hub as CI runs it (python tests/hubmirror.py build/start/stop): repos at a
known commit, an endpoint the unchanged datasets client loads FRoG through, a gated
answer, and a stop that leaves nothing listening."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hubrepos import git_repo

# Real processes (training, Snakemake, the hub mirror): `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

TOOL = Path(__file__).resolve().parents[1] / "hubmirror.py"
LOAD = ("import sys; from dfil.data import load_frog; "
        "print(len(load_frog(sys.argv[1], sys.argv[2])))")


def tool(*args: str) -> str:
    out = subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_the_same_files_give_the_same_commit(tmp_path):
    files = {"config.json": b"{}", "weights/model.safetensors": tmp_path / "w"}
    (tmp_path / "w").write_bytes(b"\0" * 300)
    first = git_repo(tmp_path / "a", files)
    assert git_repo(tmp_path / "b", files) == first
    pointer = (tmp_path / "a" / "weights" / "model.safetensors").read_text()
    assert pointer.startswith("version https://git-lfs.github.com/spec/v1\noid sha256:")
    assert pointer.endswith("size 300\n")


def test_ci_starts_the_endpoint_loads_through_it_and_stops_it(tmp_path):
    pytest.importorskip("olah", reason="olah (dev extra) serves the test hub")
    mirrors, state = tmp_path / "mirrors", tmp_path / "state.json"
    commits = json.loads(tool("build", "--mirrors", str(mirrors), "--frog", "--n-frog", "30"))
    assert json.loads((mirrors / "commits.json").read_text()) == commits
    line = tool("start", "--mirrors", str(mirrors), "--state", str(state),
                "--gate", "dfil-test/gated-frog").strip()
    assert line.startswith("export HF_ENDPOINT=http://127.0.0.1:")
    endpoint = line.split("=", 1)[1]
    olah = json.loads(state.read_text())["olah"]
    try:
        # The loader's hub path, unchanged, with HF_ENDPOINT pointing at the mirror.
        env = dict(os.environ, HF_ENDPOINT=endpoint, HF_HUB_OFFLINE="0",
                   HF_DATASETS_OFFLINE="0", TRANSFORMERS_OFFLINE="0",
                   HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_PROGRESS_BARS="1")
        out = subprocess.run([sys.executable, "-c", LOAD, "dfil-test/frog-standin", "hard"],
                             capture_output=True, text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == "30"
        gated = subprocess.run([sys.executable, "-c", LOAD, "dfil-test/gated-frog", "easy"],
                               capture_output=True, text=True, env=env, timeout=120)
        assert gated.returncode != 0 and "gated" in gated.stderr.lower()
    finally:
        tool("stop", "--state", str(state))
    assert not state.exists()
    for url in (endpoint, olah):  # the proxy and olah behind it are both gone
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", urlsplit(url).port), timeout=2).close()
