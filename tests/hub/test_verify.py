"""dfil.hub.verify: a snapshot's files against the hub's sizes and digests (pure files)."""

from __future__ import annotations

import hashlib
import subprocess

from dfil.hub.remote import RemoteFile
from dfil.hub.verify import check, digests


def test_digests_give_the_sha256_and_gits_own_blob_id(tmp_path):
    file = tmp_path / "config.json"
    file.write_bytes(b'{"hidden_size": 32}\n' * 70_000)  # past one read block
    git = subprocess.run(["git", "hash-object", str(file)], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert digests(file, git_blob=True) == (hashlib.sha256(file.read_bytes()).hexdigest(),
                                            git)
    assert digests(file, git_blob=False)[1] == ""


def test_check_names_each_file_that_differs_and_hashes_the_rest(tmp_path):
    (tmp_path / "a.safetensors").write_bytes(b"weights")
    (tmp_path / "b.json").write_bytes(b"{}")
    (tmp_path / "c.json").write_bytes(b"[]")
    sha = hashlib.sha256(b"weights").hexdigest()
    blob = hashlib.sha1(b"blob 2\0{}").hexdigest()
    other = hashlib.sha1(b"blob 2\0[]").hexdigest()
    files = [RemoteFile("a.safetensors", 7, sha), RemoteFile("b.json", 2, blob),
             RemoteFile("c.json", 2, blob), RemoteFile("d.json", 1, ""),
             RemoteFile("e.safetensors", 9, sha), RemoteFile("a.safetensors", 7, "f" * 64)]
    got = check(tmp_path, files[:5])
    assert got.sha256 == {"a.safetensors": sha,
                          "b.json": hashlib.sha256(b"{}").hexdigest()}
    assert got.bad == {"c.json": f"has git-blob {other}, "
                                 f"the hub's is {blob}",
                       "d.json": "is missing", "e.safetensors": "is missing"}
    (tmp_path / "e.safetensors").write_bytes(b"short")
    assert check(tmp_path, files[4:5]).bad == {"e.safetensors":
                                               "has 5 bytes, the hub has 9"}
    assert "has sha256" in check(tmp_path, files[5:]).bad["a.safetensors"]
