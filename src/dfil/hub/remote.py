"""What the hub records for each file of a repo at a revision: its name, size and digest.

``HfApi.repo_info(..., files_metadata=True)`` (``model_info``/``dataset_info``) lists every
file with its size, the sha256 of an LFS file and the git blob id of any other; a server
that lists no sizes (olah's mirrors) is asked for each file's own headers, whose ETag is the
same digest, as a download would. The digest is also the name huggingface_hub gives the
file's blob in its cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dfil.hub.errors import Target

SHA256 = re.compile(r"[0-9a-f]{64}")
GIT_BLOB = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a repo: its name in the repo, its size in bytes, and its digest as the
    hub records it (``blob``: LFS sha256, else the git blob id; empty where unknown)."""

    name: str
    size: int
    blob: str = ""

    @property
    def algorithm(self) -> str:
        """``sha256``, ``git-blob`` or ``""`` (no digest known: only the size is checked)."""
        if SHA256.fullmatch(self.blob):
            return "sha256"
        return "git-blob" if GIT_BLOB.fullmatch(self.blob) else ""


def listed_files(info, patterns: list[str] | None) -> list:
    """The entries of ``info.siblings`` a fetch with ``allow_patterns=patterns`` downloads
    (None: every file)."""
    from huggingface_hub.utils import filter_repo_objects

    return list(filter_repo_objects(info.siblings or [], allow_patterns=patterns,
                                    key=lambda s: s.rfilename))


def remote_files(api, target: Target, commit: str,
                 patterns: list[str] | None) -> list[RemoteFile]:
    """Every file of ``target`` at ``commit`` that ``patterns`` select, with its size and
    digest (the caller lifts the offline flags and explains errors)."""
    info = api.repo_info(target.repo, revision=commit, repo_type=target.repo_type,
                         files_metadata=True)
    return [remote_file(api, target, commit, s) for s in listed_files(info, patterns)]


def remote_file(api, target: Target, commit: str, sibling) -> RemoteFile:
    """A listed file with its size and digest; a server that lists no sizes is asked for
    the file's headers."""
    if sibling.size is None:
        meta = file_metadata(api, target, commit, sibling.rfilename)
        return RemoteFile(sibling.rfilename, int(meta.size or 0), meta.etag or "")
    blob = sibling.lfs.sha256 if sibling.lfs else (sibling.blob_id or "")
    return RemoteFile(sibling.rfilename, int(sibling.size), blob)


def file_metadata(api, target: Target, commit: str, name: str):
    """huggingface_hub's metadata of one file (a HEAD request; a gated repo answers it
    only to a token with access)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(target.repo, name, repo_type=target.repo_type, revision=commit,
                     endpoint=api.endpoint)
    return get_hf_file_metadata(url)
