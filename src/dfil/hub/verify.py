"""A fetched snapshot checked file by file against what the hub records for it.

Each file the fetch selected must be in the snapshot with the hub's size and digest: the
sha256 of an LFS file (weights, data blobs), the git blob id of any other (``sha1`` of
``blob <size>\\0`` and the content). huggingface_hub keeps a snapshot file it finds in
place without looking at it, so a file cut short or damaged in the cache would be taken
as fetched; :func:`check` finds it so that the fetch downloads it again. Each file is read
once, here, and its sha256 goes into the stamp: later readers copy it from there and never
hash the weights again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from dfil.hub.remote import RemoteFile

BLOCK = 1 << 20


@dataclass
class Checked:
    """``sha256``: file name -> sha256 of each file that matches the hub's record;
    ``bad``: file name -> what is wrong with it (missing, wrong size or digest)."""

    sha256: dict[str, str] = field(default_factory=dict)
    bad: dict[str, str] = field(default_factory=dict)


def digests(path: Path, git_blob: bool) -> tuple[str, str]:
    """The sha256 of the file at ``path`` and, where asked, its git blob id (else "")."""
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(f"blob {path.stat().st_size}\0".encode()) if git_blob else None
    with open(path, "rb") as fh:
        while block := fh.read(BLOCK):
            sha256.update(block)
            if blob is not None:
                blob.update(block)
    return sha256.hexdigest(), blob.hexdigest() if blob is not None else ""


def check(snapshot: Path, files: list[RemoteFile]) -> Checked:
    """Compare each of ``files`` with its copy below ``snapshot`` (links followed)."""
    out = Checked()
    for remote in files:
        local = snapshot / remote.name
        if not local.is_file():
            out.bad[remote.name] = "is missing"
            continue
        size = local.stat().st_size
        if size != remote.size:
            out.bad[remote.name] = f"has {size:,} bytes, the hub has {remote.size:,}"
            continue
        sha256, blob = digests(local, remote.algorithm == "git-blob")
        got = sha256 if remote.algorithm == "sha256" else blob
        if remote.algorithm and got != remote.blob:
            out.bad[remote.name] = (f"has {remote.algorithm} {got}, the hub's is "
                                    f"{remote.blob}")
            continue
        out.sha256[remote.name] = sha256
    return out
