"""Reading and writing dataset files: line-numbered errors, deterministic atomic JSONL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from dfil.util.atomic import atomic_write_bytes
from dfil.util.errors import DataError
from dfil.util.paths import path_problem


def read_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, record)`` pairs from a JSONL file or a JSON array file.

    A JSON array gets its 1-based element index as "line"; a malformed line (or bytes
    that are not UTF-8) raises :class:`DataError` naming ``path:line``. Lines end at
    "\n" only: JSON strings may hold U+2028 and other characters ``str.splitlines``
    would split at.
    """
    path = Path(path)
    if problem := path_problem(path, want="file"):
        raise DataError(f"{path} {problem}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        lineno = data.count(b"\n", 0, err.start) + 1
        raise DataError(f"{path}:{lineno}: not UTF-8 (byte {data[err.start]:#04x} at offset "
                        f"{err.start}); save the file as UTF-8") from None
    if text.lstrip().startswith("["):
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{err.lineno}: invalid JSON ({err.msg})") from err
        for i, row in enumerate(rows, start=1):
            yield i, _as_record(row, path, i)
        return
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"{path}:{lineno}: invalid JSON ({err.msg})") from err
        yield lineno, _as_record(row, path, lineno)


def _as_record(row: Any, path: Path, lineno: int) -> dict[str, Any]:
    if not isinstance(row, dict):
        raise DataError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
    return row


def dumps_jsonl(records: Iterable[dict[str, Any]]) -> bytes:
    """Byte-deterministic JSONL: sorted keys, fixed separators, UTF-8, one record a line."""
    lines = (json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
             for r in records)
    return "".join(line + "\n" for line in lines).encode("utf-8")


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> str:
    """Write records atomically as deterministic JSONL; returns the file's sha256."""
    data = dumps_jsonl(records)
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def prepared_split(root: str | Path, split: str, config: str = "") -> Path:
    """The parquet file of ``split`` (of ``config``) in a directory of prepared splits, as
    a hub fetch writes them (``[<config>/]<split>.parquet``); :class:`DataError` naming the
    directory and what was looked for otherwise."""
    root = Path(root)
    names = [f"{config}/{split}.parquet"] if config else []
    names.append(f"{split}.parquet")
    for name in names:
        if (root / name).is_file():
            return root / name
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))
    raise DataError(f"{root}: no prepared split {split!r} (looked for {names}); the dataset's "
                    f"fetch wrote {written}")


def parquet_records(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row_number, record)`` pairs of a parquet file (rows numbered from 1)."""
    import pandas as pd

    table = pd.read_parquet(path)
    yield from enumerate(table.to_dict("records"), start=1)
