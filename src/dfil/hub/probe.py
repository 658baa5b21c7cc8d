"""Ask the hub, before anything is fetched, whether a repo answers at its revision and how
many bytes its fetch would still download (the preflight's question; nothing is written).

:func:`probe` lifts the offline flags for itself only (:func:`dfil.hub.online.online`),
asks for the repo's file list with sizes at the revision (``HfApi.repo_info(...,
files_metadata=True)``, i.e. ``model_info``/``dataset_info``) and, for a gated repo, either
refuses at once where there is no token or asks for one file's metadata, which a token
without access is refused. Errors are :class:`~dfil.util.errors.HubError` lines from
:func:`dfil.hub.errors.explain`, naming the backbone or dataset and the fix.
"""

from __future__ import annotations

from pathlib import Path

from dfil.hub.errors import Target, gated_error
from dfil.hub.fetch import MODEL_FILES, explained
from dfil.hub.online import online
from dfil.hub.remote import RemoteFile, file_metadata, listed_files, remote_file
from dfil.hub.store import snapshot_dir


def probe(target: Target) -> tuple[str, list[RemoteFile]]:
    """The commit ``target``'s revision names and the files its fetch downloads (a
    backbone's :data:`~dfil.hub.fetch.MODEL_FILES`, a dataset's every file);
    :class:`~dfil.util.errors.HubError` when the hub refuses, lacks the repo or the revision,
    or cannot be reached."""
    from huggingface_hub import HfApi, get_token

    api = HfApi(endpoint=target.endpoint)
    with online(), explained(target, api):
        info = api.repo_info(target.repo, revision=target.revision,
                             repo_type=target.repo_type, files_metadata=True)
        patterns = list(MODEL_FILES) if target.kind == "model" else None
        siblings = listed_files(info, patterns)
        if getattr(info, "gated", False):
            if get_token() is None:
                raise gated_error(target)
            if siblings:  # metadata is public; a file answers only a token with access
                file_metadata(api, target, info.sha, siblings[0].rfilename)
        files = [remote_file(api, target, info.sha, s) for s in siblings]
    return info.sha or "", files


def missing_bytes(cache_dir: str | Path, target: Target, commit: str,
                  files: list[RemoteFile]) -> int:
    """Bytes of ``files`` whose blob is not yet in the cache's huggingface_hub store for
    ``target`` at its full size (a fetch killed half-way keeps the blobs it finished; one
    cut short is downloaded again)."""
    blobs = snapshot_dir(cache_dir, target.kind, target.repo, commit).parent.parent / "blobs"
    return sum(f.size for f in files if not (f.blob and (blobs / f.blob).is_file()
                                             and (blobs / f.blob).stat().st_size == f.size))
