"""What jobs read: a fetched repo's local directory in the one cache, found by (repo,
commit), with the hub offline.

The cache is set in one place, the environment: ``DFIL_HUB_CACHE``, else ``hub/`` under
``DFIL_CACHE`` (``~/.cache/dfil`` by default, where the embedded backbone lives too). Every
fetch and every job of a run reads the same variable (SLURM jobs inherit the submitting
environment), and no cell's config hash holds it: moving the cache retrains nothing.

A cell names a fetched dataset as ``hub:<org>/<name>@<commit>`` (its ``data.source``,
``test_source`` or ``qure_source``; a grid writes it from its ``datasets:`` section) and a
fetched backbone by ``model_id`` and ``revision``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from dfil.hub.store import fetched_path
from dfil.util.errors import ConfigError
from dfil.util.paths import path_problem

HUB_PREFIX = "hub:"
_SOURCE = re.compile(r"hub:([^/@\s]+/[^/@\s]+)@([0-9a-f]{40})")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
#: Suffixes of the data files a local source may name.
_FILE_SUFFIXES = {".json", ".jsonl", ".parquet", ".csv", ".tsv", ".txt"}


def cache_root() -> Path:
    """The hub cache: ``$DFIL_HUB_CACHE``, else ``$DFIL_CACHE/hub``, else
    ``~/.cache/dfil/hub``."""
    if os.environ.get("DFIL_HUB_CACHE"):
        return Path(os.environ["DFIL_HUB_CACHE"])
    return Path(os.environ.get("DFIL_CACHE") or Path.home() / ".cache" / "dfil") / "hub"


def hub_source(repo: str, commit: str) -> str:
    """The source string of dataset ``repo`` at ``commit``."""
    return f"{HUB_PREFIX}{repo}@{commit}"


def parse_hub_source(source: str) -> tuple[str, str] | None:
    """``(repo, commit)`` of a ``hub:`` source; None for anything else (a local path);
    :class:`ConfigError` for a ``hub:`` source that does not name a full commit."""
    if not source.startswith(HUB_PREFIX):
        return None
    match = _SOURCE.fullmatch(source)
    if not match:
        raise ConfigError(f"data source {source!r}: expected hub:<org>/<name>@<commit of 40 "
                          "hex digits>")
    return match.group(1), match.group(2)


def is_hub_id(source: str) -> bool:
    """Whether ``source`` reads as a bare hub id, ``<org>/<name>`` (``GAIR/FRoG``), rather
    than a path of this machine (absolute, relative with more parts, or a file name)."""
    return bool(_HUB_ID.fullmatch(source)) and Path(source).suffix not in _FILE_SUFFIXES


def local_source(source: str, label: str = "", key: str = "data.source") -> str:
    """A dataset source as a local path: a ``hub:`` source's prepared splits in the cache
    (:class:`~dfil.util.errors.HubError` naming the fetch if they are not there), anything else
    as given. A path that cannot be read (missing, a symlink loop or a dangling link:
    :func:`dfil.util.paths.path_problem`) is a :class:`ConfigError` naming ``key``, never a
    hub lookup: jobs read hub datasets only once fetched, so a bare hub id
    (``GAIR/FRoG``, :func:`is_hub_id`) that is no local path is refused the same way."""
    pinned = parse_hub_source(source)
    if pinned is None:
        if source and (problem := path_problem(source)):
            hub = (f" (a hub dataset is read once fetched: declare {source} in the grid's "
                   "datasets: and name it dataset:<entry>)" if is_hub_id(source) else "")
            raise ConfigError(f"{key}: {source} {problem}; give an existing file or "
                              f"directory{hub}")
        return source
    return str(fetched_path(cache_root(), "dataset", *pinned, label=label))


def local_model(repo: str, commit: str, label: str = "") -> str:
    """The fetched snapshot of backbone ``repo`` at ``commit``."""
    return str(fetched_path(cache_root(), "model", repo, commit, label=label))
