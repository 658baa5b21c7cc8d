"""Fetch one hub repo at one commit into the cache, once, and stamp it.

The order: a stamp already there for a pinned commit answers at once, with no network;
otherwise the revision is resolved to its commit (:func:`resolve_revision`, also the lock
step's tool), the repo's file lock is taken (a second fetcher of the same repo waits here
and then finds the stamp), the files are downloaded with huggingface_hub's
``snapshot_download`` (each into an ``.incomplete`` file until it is whole), every file is
checked against the hub's size and digest (:mod:`dfil.hub.verify`; one that does not match,
such as a cached file cut short, is downloaded again), a dataset's splits are prepared, and
the stamp is written last, with each checked file's sha256 (a dataset's: its source files'
and its prepared splits'). A fetch killed half-way leaves no
stamp; the next one removes its partial files and downloads again (huggingface_hub 2.x
resumes a transfer whose connection drops, within one process only). Errors are
:class:`~dfil.hub.errors.HubError` lines naming the backbone or dataset and the fix; a gated
repo's refusal is also left in the cache for the jobs that read it. The token is
huggingface_hub's own: ``HF_TOKEN``, else the one ``hf auth login`` stored. A cache shared
by a group stays writable by it (:mod:`dfil.hub.shared`).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

from dfil.hub.errors import Target, explain
from dfil.hub.online import online
from dfil.hub.prepare import prepare_splits
from dfil.hub.remote import remote_files
from dfil.hub.shared import give_group, group_writable, permission_error
from dfil.hub.store import (
    file_sizes,
    lock_path,
    prepared_dir,
    read_stamp,
    snapshot_dir,
    stamp_problem,
    write_refusal,
    write_stamp,
)
from dfil.hub.verify import check, digests
from dfil.util.errors import GatedRepo, HubError
from dfil.util.lock import hold

#: What a backbone needs: its config, safetensors weights (never pickles) and tokenizer
#: files. Leaves out duplicates some repos carry (Mistral's consolidated.safetensors,
#: Llama's original/*.pth), other frameworks' weights and remote code.
MODEL_FILES = ("config.json", "generation_config.json", "model*.safetensors",
               "model.safetensors.index.json", "tokenizer*", "special_tokens_map.json",
               "vocab.json", "merges.txt", "added_tokens.json")
COMMIT = re.compile(r"[0-9a-f]{40}")


def resolve_revision(repo: str, revision: str, *, kind: str = "model", label: str = "",
                     endpoint: str | None = None) -> str:
    """The commit that ``revision`` (a branch, tag or commit) of hub repo ``repo`` names
    now: what the lock step records for a config that names a branch."""
    return _resolve(Target(kind, repo, revision, label, endpoint))


def fetch_model(repo: str, revision: str, cache_dir: str | Path, *, label: str = "",
                endpoint: str | None = None) -> dict:
    """Download backbone ``repo`` at ``revision`` (the files :data:`MODEL_FILES` match)
    into ``cache_dir``; returns its stamp (repo, revision, commit, path, files)."""
    return _fetch(Target("model", repo, revision, label, endpoint), Path(cache_dir),
                  list(MODEL_FILES), None)


def fetch_dataset(repo: str, revision: str, cache_dir: str | Path, *, label: str = "",
                  configs: Sequence[str | None] = (None,),
                  endpoint: str | None = None) -> dict:
    """Download dataset ``repo`` at ``revision`` into ``cache_dir`` and write the splits of
    each of ``configs`` (None: the default config) as parquet; returns its stamp, whose
    ``path`` is the prepared directory and ``rows`` the rows per split file."""
    return _fetch(Target("dataset", repo, revision, label, endpoint), Path(cache_dir), None,
                  list(configs))


def _fetch(target: Target, cache: Path, patterns, configs) -> dict:
    try:
        with group_writable(cache):
            return _fetch_shared(target, cache, patterns, configs)
    except PermissionError as err:
        raise permission_error(err, cache) from err


def _fetch_shared(target: Target, cache: Path, patterns, configs) -> dict:
    if COMMIT.fullmatch(target.revision) and \
            stamp_problem(cache, target.kind, target.repo, target.revision) is None:
        return read_stamp(cache, target, target.revision)
    commit = _resolve(target)
    with _locked(lock_path(cache, target.kind, target.repo), target):
        if stamp_problem(cache, target.kind, target.repo, commit) is None:
            return read_stamp(cache, target, commit)
        _drop_partials(cache, target, commit)
        try:
            snapshot = _download(target, commit, cache, patterns)
        except GatedRepo as err:  # the jobs that read it say so (dfil.hub.store)
            write_refusal(cache, target.kind, target.repo, commit, str(err))
            raise
        sha256 = _verified(target, commit, cache, snapshot, patterns)
        record = {"kind": target.kind, "repo": target.repo, "revision": target.revision,
                  "commit": commit, "label": target.label, "endpoint": target.endpoint,
                  "fetched": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "versions": _versions(target.kind)}
        if configs is None:
            _check_model_files(snapshot, target)
            record.update(path=str(snapshot), files=file_sizes(snapshot), sha256=sha256)
        else:
            out = prepared_dir(cache, target.repo, commit)
            record["rows"] = prepare_splits(snapshot, out, configs, target)
            record["source_files"] = file_sizes(snapshot)
            record["source_sha256"] = sha256
            record["sha256"] = {rel: digests(out / rel, git_blob=False)[0]
                                for rel in file_sizes(out)}  # the splits jobs read
            record.update(path=str(out), files=file_sizes(out))
        write_stamp(cache, record)
    return read_stamp(cache, target, commit)


def _drop_partials(cache: Path, target: Target, commit: str) -> None:
    """Remove what a killed download of this repo left: huggingface_hub writes each file to
    a process-unique ``*.incomplete`` that no later download reuses, and under the repo's
    lock no other fetch of it is running."""
    blobs = snapshot_dir(cache, target.kind, target.repo, commit).parent.parent / "blobs"
    for part in sorted(blobs.glob("*.incomplete")):
        size = part.stat().st_size
        part.unlink()
        print(f"dfil: removed {part} ({size:,} bytes), left by a killed fetch of "
              f"{target.describe()}", file=sys.stderr)


def _resolve(target: Target) -> str:
    from huggingface_hub import HfApi

    api = HfApi(endpoint=target.endpoint)
    with online(), explained(target, api):
        info = api.repo_info(target.repo, revision=target.revision,
                             repo_type=target.repo_type)
    if not info.sha:
        raise HubError(f"{target.describe()}: the hub gave no commit for revision "
                       f"{target.revision!r}")
    return info.sha


def _download(target: Target, commit: str, cache: Path, patterns) -> Path:
    from huggingface_hub import HfApi, snapshot_download

    with online(), explained(target, HfApi(endpoint=target.endpoint)):
        path = Path(snapshot_download(
            target.repo, repo_type=target.repo_type, revision=commit,
            cache_dir=cache / "hub", allow_patterns=patterns, endpoint=target.endpoint))
    expected = snapshot_dir(cache, target.kind, target.repo, commit)
    give_group(expected.parent.parent / "trees" / f"{commit}.json")
    if path.resolve() != expected.resolve():
        raise HubError(f"{target.describe()}: huggingface_hub put commit {commit} at {path}, "
                       f"not at {expected} where jobs look for it")
    return expected


def _verified(target: Target, commit: str, cache: Path, snapshot: Path,
              patterns) -> dict[str, str]:
    """Check every file of ``snapshot`` against the hub's record, download again each one
    that does not match, and return file name -> sha256; :class:`HubError` if a file
    still does not match."""
    from huggingface_hub import HfApi, hf_hub_download

    api = HfApi(endpoint=target.endpoint)
    with online(), explained(target, api):
        files = remote_files(api, target, commit, patterns)
    checked = check(snapshot, files)
    if checked.bad:
        for name, why in checked.bad.items():
            print(f"dfil: {snapshot / name} {why}: downloading it again", file=sys.stderr)
        with online(), explained(target, api):
            for name in checked.bad:
                hf_hub_download(target.repo, name, repo_type=target.repo_type,
                                revision=commit, cache_dir=cache / "hub",
                                endpoint=target.endpoint, force_download=True)
        again = check(snapshot, [f for f in files if f.name in checked.bad])
        for name, why in again.bad.items():
            raise HubError(f"{target.describe()} at {commit}: {snapshot / name} {why} after "
                           "downloading it again: the hub's copy or the transfer is faulty; "
                           "try the fetch again later")
        checked.sha256.update(again.sha256)
    return dict(sorted(checked.sha256.items()))


@contextlib.contextmanager
def explained(target: Target, api) -> Iterator[None]:
    """Turn huggingface_hub's and the HTTP client's errors into one HubError line."""
    try:
        yield
    except (HubError, PermissionError):  # the cache's, said by the fetch
        raise
    except Exception as err:
        module = type(err).__module__.split(".")[0]
        if not (isinstance(err, OSError) or module in ("huggingface_hub", "httpx", "httpx2",
                                                       "httpcore")):
            raise
        raise explain(err, target, _refs(api, target)) from err


def _refs(api, target: Target) -> list[str] | None:
    """The repo's branch and tag names, or None where the server lists none (no repo)."""
    try:
        refs = api.list_repo_refs(target.repo, repo_type=target.repo_type)
    except Exception:  # any failure means: no refs to tell a missing revision by
        return None
    return [r.name for r in (*refs.branches, *refs.tags)]


@contextlib.contextmanager
def _locked(path: Path, target: Target) -> Iterator[None]:
    with hold(path, waiting=f"waiting for another fetch of {target.describe()} ({path})"):
        yield


def _check_model_files(snapshot: Path, target: Target) -> None:
    names = {p.name for p in snapshot.rglob("*")}
    if "config.json" not in names or not any(n.endswith(".safetensors") for n in names):
        raise HubError(f"{target.describe()} at {target.revision}: the fetch found no "
                       f"config.json and safetensors weights (got {sorted(names)}); only "
                       "safetensors weights are loaded, never pickled ones")


def _versions(kind: str) -> dict[str, str]:
    from importlib.metadata import version

    names = ("huggingface_hub", "datasets") if kind == "dataset" else ("huggingface_hub",)
    return {n: version(n) for n in names}
