"""Where a fetched repo lives in the cache, its stamp, and the offline read that trusts
only a finished fetch.

The stamp (``stamps/<kind>s/<org>/<name>/<commit>.json``) is written last and atomically
by the fetch: repo, revision, commit, local path, every file's size and the sha256 of
each file the fetch checked against the hub (``sha256``; a dataset's ``source_sha256``,
and ``sha256`` of the prepared splits its jobs read),
which readers copy from here rather than hash the weights again. A download killed
half-way leaves no stamp, so :func:`fetched_path` refuses it and names the command that
finishes it; a file removed from the cache after the fetch is refused the same way. Paths
are recomputed from ``cache_dir`` on every read, so a cache moved as a whole still reads.
A fetch that a gated repo refused leaves ``<commit>.gated.json`` there instead, so a job
that needs it fails as gated (:class:`~dfil.util.errors.GatedRepo`), not as never fetched.
"""

from __future__ import annotations

import json
from pathlib import Path

from dfil.hub.errors import Target
from dfil.util.atomic import atomic_write_json
from dfil.util.errors import GatedRepo, HubError

STAMP_FIELDS = ("kind", "repo", "revision", "commit", "path", "files")


def _org_name(repo: str) -> tuple[str, str]:
    org, name = repo.split("/")
    return org, name


def snapshot_dir(cache_dir: str | Path, kind: str, repo: str, commit: str) -> Path:
    """huggingface_hub's snapshot of ``repo`` at ``commit`` under ``<cache_dir>/hub``."""
    org, name = _org_name(repo)
    return Path(cache_dir) / "hub" / f"{kind}s--{org}--{name}" / "snapshots" / commit


def prepared_dir(cache_dir: str | Path, repo: str, commit: str) -> Path:
    """A dataset's splits as prepared by its fetch (``<config>/<split>.parquet``)."""
    org, name = _org_name(repo)
    return Path(cache_dir) / "prepared" / "datasets" / org / name / commit


def local_dir(cache_dir: str | Path, kind: str, repo: str, commit: str) -> Path:
    """What jobs read: a model's snapshot, a dataset's prepared splits."""
    if kind == "dataset":
        return prepared_dir(cache_dir, repo, commit)
    return snapshot_dir(cache_dir, kind, repo, commit)


def stamp_path(cache_dir: str | Path, kind: str, repo: str, commit: str) -> Path:
    org, name = _org_name(repo)
    return Path(cache_dir) / "stamps" / f"{kind}s" / org / name / f"{commit}.json"


def lock_path(cache_dir: str | Path, kind: str, repo: str) -> Path:
    """The file lock every fetch of ``repo`` holds while it downloads and stamps."""
    org, name = _org_name(repo)
    return Path(cache_dir) / "locks" / f"{kind}s--{org}--{name}.lock"


def file_sizes(root: Path) -> dict[str, int]:
    """Every file below ``root`` (links followed) -> its size, by path relative to root."""
    return {p.relative_to(root).as_posix(): p.stat().st_size
            for p in sorted(root.rglob("*")) if p.is_file()}


def write_stamp(cache_dir: str | Path, record: dict) -> Path:
    """Write the stamp of a finished fetch (the last thing a fetch does)."""
    missing = [k for k in STAMP_FIELDS if k not in record]
    if missing:
        raise ValueError(f"stamp record lacks {missing}")
    path = stamp_path(cache_dir, record["kind"], record["repo"], record["commit"])
    atomic_write_json(path, record)
    refusal_path(cache_dir, record["kind"], record["repo"], record["commit"]).unlink(
        missing_ok=True)
    return path


def refusal_path(cache_dir: str | Path, kind: str, repo: str, commit: str) -> Path:
    """Where a fetch that the hub refused as gated leaves the refusal, beside the stamp it
    could not write: a job then says why the repo is not there (a later fetch that
    succeeds removes it)."""
    return stamp_path(cache_dir, kind, repo, commit).with_suffix(".gated.json")


def write_refusal(cache_dir: str | Path, kind: str, repo: str, commit: str,
                  message: str) -> None:
    atomic_write_json(refusal_path(cache_dir, kind, repo, commit),
                      {"kind": kind, "repo": repo, "commit": commit, "message": message})


def stamp_problem(cache_dir: str | Path, kind: str, repo: str, commit: str) -> str | None:
    """Why the fetch of ``repo`` at ``commit`` cannot be read (None: it can)."""
    path = stamp_path(cache_dir, kind, repo, commit)
    if not path.is_file():
        return f"no stamp {path} (never fetched, or its fetch did not finish)"
    try:
        record = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        return f"unreadable stamp {path} ({err})"
    absent = [k for k in STAMP_FIELDS if k not in record]
    if absent or record["commit"] != commit or record["repo"] != repo:
        return f"stamp {path} is not a stamp of {repo} at {commit} (fields {absent} missing)"
    root = local_dir(cache_dir, kind, repo, commit)
    for rel, size in record["files"].items():
        file = root / rel
        if not file.is_file():
            return f"{file} is missing (the cache lost a file after the fetch)"
        if file.stat().st_size != size:
            return f"{file} has {file.stat().st_size} bytes, the fetch wrote {size}"
    return None


def read_stamp(cache_dir: str | Path, target: Target, commit: str) -> dict:
    """The stamp of a finished, intact fetch; :class:`HubError` naming the fix otherwise."""
    problem = stamp_problem(cache_dir, target.kind, target.repo, commit)
    refusal = refusal_path(cache_dir, target.kind, target.repo, commit)
    if problem and refusal.is_file():
        raise GatedRepo(json.loads(refusal.read_text())["message"])
    if problem:
        raise HubError(f"{target.describe()} at commit {commit} is not fetched into "
                       f"{cache_dir}: {problem}. Run its fetch (`dfil hub fetch --kind "
                       f"{target.kind} --repo {target.repo} --revision {commit} --cache "
                       f"{cache_dir}`, or the workflow's fetch rule) where the network is")
    return json.loads(stamp_path(cache_dir, target.kind, target.repo, commit).read_text())


def fetched_path(cache_dir: str | Path, kind: str, repo: str, commit: str,
                 label: str = "") -> Path:
    """The local directory of ``repo`` at ``commit``, for a job running with the hub
    offline: a model's files (``from_pretrained(path)``) or a dataset's prepared splits.
    Reads nothing from the network; :class:`HubError` if the fetch did not finish."""
    read_stamp(cache_dir, Target(kind, repo, commit, label), commit)
    return local_dir(cache_dir, kind, repo, commit)
