"""Ask the hub, before anything is fetched, whether a repo answers at its revision and how
many bytes its fetch would still download (the preflight's question; nothing is written).

:func:`probe` lifts the offline flags for itself only (:func:`dfil.hub.online.online`),
asks for the repo's file list with sizes at the revision (``HfApi.repo_info(...,
files_metadata=True)``, i.e. ``model_info``/``dataset_info``) and, for a gated repo, either
refuses at once where there is no token or asks for one file's metadata, which a token
without access is refused. Errors are :class:`~dfil.errors.HubError` lines from
:func:`dfil.hub.errors.explain`, naming the backbone or dataset and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dfil.hub.errors import Target, gated_error
from dfil.hub.fetch import MODEL_FILES, explained
from dfil.hub.online import online
from dfil.hub.store import snapshot_dir


@dataclass(frozen=True)
class RemoteFile:
    """One file a fetch would download: its name in the repo, its size in bytes, and the
    name huggingface_hub gives its blob in the cache (LFS sha256, else the git blob id)."""

    name: str
    size: int
    blob: str = ""


def probe(target: Target) -> tuple[str, list[RemoteFile]]:
    """The commit ``target``'s revision names and the files its fetch downloads (a
    backbone's :data:`~dfil.hub.fetch.MODEL_FILES`, a dataset's every file);
    :class:`~dfil.errors.HubError` when the hub refuses, lacks the repo or the revision,
    or cannot be reached."""
    from huggingface_hub import HfApi, get_token
    from huggingface_hub.utils import filter_repo_objects

    api = HfApi(endpoint=target.endpoint)
    with online(), explained(target, api):
        info = api.repo_info(target.repo, revision=target.revision,
                             repo_type=target.repo_type, files_metadata=True)
        patterns = list(MODEL_FILES) if target.kind == "model" else None
        siblings = list(filter_repo_objects(info.siblings or [], allow_patterns=patterns,
                                            key=lambda s: s.rfilename))
        if getattr(info, "gated", False):
            if get_token() is None:
                raise gated_error(target)
            if siblings:  # metadata is public; a file answers only a token with access
                _file_metadata(api, target, info.sha, siblings[0].rfilename)
        files = [_remote_file(api, target, info.sha, s) for s in siblings]
    return info.sha or "", files


def _remote_file(api, target: Target, commit: str, sibling) -> RemoteFile:
    """A listed file with its size and blob name; a server that lists no sizes (olah's
    mirrors) is asked for the file's own headers, as a download would."""
    if sibling.size is None:
        meta = _file_metadata(api, target, commit, sibling.rfilename)
        return RemoteFile(sibling.rfilename, int(meta.size or 0), meta.etag or "")
    blob = sibling.lfs.sha256 if sibling.lfs else (sibling.blob_id or "")
    return RemoteFile(sibling.rfilename, int(sibling.size), blob)


def _file_metadata(api, target: Target, commit: str, name: str):
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(target.repo, name, repo_type=target.repo_type, revision=commit,
                     endpoint=api.endpoint)
    return get_hf_file_metadata(url)


def missing_bytes(cache_dir: str | Path, target: Target, commit: str,
                  files: list[RemoteFile]) -> int:
    """Bytes of ``files`` whose blob is not yet in the cache's huggingface_hub store for
    ``target`` (a fetch killed half-way keeps the blobs it finished)."""
    blobs = snapshot_dir(cache_dir, target.kind, target.repo, commit).parent.parent / "blobs"
    return sum(f.size for f in files if not (f.blob and (blobs / f.blob).is_file()))
