"""A fetched dataset's splits written once as parquet files that jobs read.

The fetch loads the downloaded snapshot with ``datasets`` (its README's configs, or the
files' own layout), in a scratch cache it then discards, and writes every split of each
requested config as ``<config>/<split>.parquet`` (``<split>.parquet`` for the default
config): the layout :func:`dfil.data.load_frog` reads from a directory. GPU jobs read these
files and never write into the shared cache. ``datasets`` 5 runs no loading scripts: a
revision whose data only a script can build is refused with the way out.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from dfil.hub.errors import Target
from dfil.util.errors import HubError


def split_file(config: str | None, split: str) -> str:
    """The prepared file of ``split`` of ``config``, relative to the prepared directory."""
    return f"{config}/{split}.parquet" if config else f"{split}.parquet"


def prepare_splits(snapshot: Path, out: Path, configs: Sequence[str | None],
                   target: Target) -> dict[str, int]:
    """Write every split of each of ``configs`` of the dataset at ``snapshot`` below
    ``out`` (replacing what a killed fetch left there); returns rows per written file.

    The files appear under ``out`` all at once (a directory renamed into place).
    """
    tmp = out.parent / f".{out.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    rows: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="dfil-datasets-") as scratch:
        for config in configs:
            splits = _load(snapshot, config, scratch, target)
            for split, table in splits.items():
                rel = split_file(config, split)
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                table.to_parquet(str(tmp / rel))
                rows[rel] = len(table)
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, out)
    return rows


def _load(snapshot: Path, config: str | None, scratch: str, target: Target):
    import datasets

    where = f"{target.describe()} at {target.revision}, config {config or 'default'}"
    scripts = sorted(p.name for p in snapshot.glob("*.py"))
    try:
        return datasets.load_dataset(str(snapshot), config, cache_dir=scratch)
    except (ValueError, FileNotFoundError, datasets.exceptions.DatasetNotFoundError) as err:
        hint = (f" Its files at this revision include a loading script ({', '.join(scripts)}), "
                "which datasets 5 does not run: pin a revision whose data files load without "
                "it (the hub's parquet conversion, refs/convert/parquet) and say so in "
                "docs/reproduction-notes.md." if scripts else "")
        raise HubError(f"{where}: datasets cannot load it ({err}).{hint}") from err
