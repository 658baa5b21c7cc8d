"""A hub endpoint on 127.0.0.1 for the fetch tests: olah serving tiny git repos, behind the
counting proxy of tests/hubmirror.py. Skipped cleanly where olah is not installed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hubids import BIG, FROG, TINY


@dataclass
class Mirror:
    endpoint: str
    commits: dict
    proxy: object
    mirrors: Path


@pytest.fixture(scope="session")
def mirror(tmp_path_factory):
    pytest.importorskip("olah", reason="olah (dev extra) serves the test hub")
    from dfil.data.synthetic import write_frog_like
    from hubmirror import Olah, Proxy
    from hubrepos import frog_dataset_files, git_repo, repo_path, tiny_model_files

    root = tmp_path_factory.mktemp("hub")
    mirrors = root / "mirrors"
    tiny = tiny_model_files(root / "tiny")
    # Files a backbone fetch must leave behind: a duplicate weights file and a pickle.
    tiny.update({"consolidated.safetensors": b"duplicate weights", "pytorch_model.bin": b"x"})
    write_frog_like(root / "frog", seed=0, n_easy=40, n_hard=40)
    commits = {
        TINY: git_repo(repo_path(mirrors, "model", TINY), tiny),
        BIG: git_repo(repo_path(mirrors, "model", BIG),
                      tiny_model_files(root / "big", vocab_size=49152)),
        FROG: git_repo(repo_path(mirrors, "dataset", FROG), frog_dataset_files(root / "frog")),
    }
    (root / "commits.json").write_text(json.dumps(commits))
    olah = Olah(mirrors, root / "olah")
    proxy = Proxy(olah.start())
    try:
        yield Mirror(proxy.start(), commits, proxy, mirrors)
    finally:
        proxy.stop()
        olah.stop()


@pytest.fixture
def hub(mirror, monkeypatch, tmp_path_factory):
    """The endpoint with a clean request log, no gated repo, no stalled or cut file, and
    no token (neither HF_TOKEN nor a stored login)."""
    from huggingface_hub import constants

    no_token = tmp_path_factory.mktemp("no-token") / "token"
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_TOKEN_PATH", str(no_token))  # for the tests' child processes
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(no_token))
    proxy = mirror.proxy
    with proxy.lock:
        proxy.requests.clear()
        proxy.sent.clear()
    proxy.gated.clear()
    proxy.no_access.clear()
    proxy.stall.clear()
    proxy.cut.clear()
    proxy.release.clear()
    yield mirror
    proxy.release.set()
    proxy.gated.clear()
    proxy.no_access.clear()
    proxy.stall.clear()
