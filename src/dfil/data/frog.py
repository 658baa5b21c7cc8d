"""FRoG (Li et al. 2024), task ``mask_quant``: loading, splits, few-shot subsets, prompts.

Two record layouts are accepted: the Hugging Face release ``GAIR/FRoG`` (``question``,
``target_percentage_mention``, ``quantifier``, ...) and the FRoG repository's
(``question``, ``info = [percentage mention, quantifier, strength gap]``, ``quantifier``).
The proportion p of each item is read from its masked percentage mention (note R-frog-p).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from dfil.core.quantifiers import FROG_CLASSES
from dfil.data.io import read_records
from dfil.data.splits import check_unique_ids
from dfil.util.errors import DataError
from dfil.util.paths import path_problem

FROG_HUB_ID = "GAIR/FRoG"
SPLITS = ("easy", "hard")

#: App. C.2, verbatim apart from the sentence slot; [MASK] becomes "___".
PROMPT_TEMPLATE = (
    "Choose the most appropriate quantifier for the\nblank in the following sentence:\n\n"
    '"{sentence}"\n\nOptions: {options}\n\nAnswer:'
)

_PERCENT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*%?\s*$")
_RANGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%?\s*(?:-|to|–)\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_percentage(text: str) -> float:
    """"5 %" -> 0.05, "31.1%" -> 0.311, "0%-2%" -> 0.01 (midpoint of a range).

    ``ValueError`` naming the text for anything else, and for a value outside [0, 100] %
    ("150 %" is a damaged record, not p = 1: it is refused, never clipped).
    """
    if not isinstance(text, str):
        raise ValueError(f"unparseable percentage {text!r}")
    m = _PERCENT.match(text)
    if m and "%" in text:
        return _in_range(float(m.group(1)), text) / 100
    m = _RANGE.match(text)
    if m:
        return (_in_range(float(m.group(1)), text) + _in_range(float(m.group(2)), text)) / 200
    raise ValueError(f"unparseable percentage {text!r}")


def _in_range(value: float, text: str) -> float:
    if not 0.0 <= value <= 100.0:
        raise ValueError(f"percentage {text!r} lies outside [0, 100] %")
    return value


def label_of(name: str, where: str, classes: tuple[str, ...] = FROG_CLASSES) -> int:
    """Class index of quantifier ``name``; :class:`DataError` naming ``where`` otherwise."""
    key = str(name).strip().lower()
    if key not in classes:
        raise DataError(f"{where}: unknown quantifier {name!r}; expected one of {list(classes)}")
    return classes.index(key)


def parse_frog_record(record: dict, where: str, split: str = "") -> dict:
    """One FRoG item in either layout -> a row (id, question, label, label_name, p, ...).

    The id is the record's own, prefixed with ``split`` (``"hard/17"``): the release may
    number its easy and hard versions of one question set alike, and a row id must name
    one record. A record without an id (the repository's layout) is named by ``where``.
    """
    if "question" not in record:
        raise DataError(f"{where}: record has no 'question'")
    if not isinstance(record["question"], str) or not record["question"].strip():
        raise DataError(f"{where}: 'question' must be a non-empty string, got "
                        f"{record['question']!r}")
    info = record.get("info")
    name = record.get("quantifier")
    if name is None and isinstance(info, list) and len(info) > 1:
        name = info[1]
    if name is None or name == "":
        raise DataError(f"{where}: record has no label ('quantifier' or info[1])")
    mention = record.get("target_percentage_mention")
    if mention is None and isinstance(info, list) and info:
        mention = info[0]
    if mention is None:
        raise DataError(f"{where}: record has no percentage mention to read p from")
    try:
        p = parse_percentage(mention)
    except ValueError as err:
        raise DataError(f"{where}: {err}") from None
    label = label_of(name, where)
    rid = record.get("id")
    return {
        "id": where if rid is None else (f"{split}/{rid}" if split else str(rid)),
        "question": record["question"],
        "label": label,
        "label_name": FROG_CLASSES[label],
        "p": p,
        "percentage_mention": mention,
        "origin": where,
    }


def frog_frame(records, source: str, split: str = "") -> pd.DataFrame:
    """Rows of :func:`parse_frog_record` for ``(line, record)`` pairs from ``source``;
    :class:`DataError` for an id given twice."""
    rows = [parse_frog_record(r, f"{source}:{line}", split) for line, r in records]
    if not rows:
        raise DataError(f"{source}: no records")
    df = pd.DataFrame(rows)
    check_unique_ids(df, source)
    return df


def _local_file(root: Path, split: str, task: str) -> Path:
    if root.is_file():
        return root
    patterns = [f"{split}.jsonl", f"{split}.json", f"{task}/{split}*.parquet",
                f"{task}/{split}*.jsonl", f"{split}*.parquet"]
    for pattern in patterns:
        # A name that is there but unreadable (a symlink loop) is returned, for the
        # reader to say what is wrong with it; a glob without "*" would pass over it.
        found = [root / pattern] if os.path.lexists(root / pattern) else sorted(
            root.glob(pattern))
        if found:
            return found[0]
    raise DataError(f"{root}: no file for split {split!r}; looked for {patterns}")


def load_frog(source: str | Path = FROG_HUB_ID, split: str = "easy",
              task: str = "mask_quant") -> pd.DataFrame:
    """FRoG ``task`` split ``split`` from a local file or directory, or from the hub.

    A local ``source`` may be a JSON/JSONL/parquet file (taken as the split itself) or a
    directory holding ``{split}.jsonl`` or the hub's ``{task}/{split}-*.parquet`` (the
    repository's ``task={task}.jsonl`` has no split: pass the file itself). Anything else
    is a hub id for ``datasets``.
    """
    if split not in SPLITS:
        raise DataError(f"unknown FRoG split {split!r}; expected one of {list(SPLITS)}")
    path = Path(source)
    if path.exists():
        file = _local_file(path, split, task)
        if problem := path_problem(file, want="file"):
            raise DataError(f"{file} {problem}")
        if file.suffix == ".parquet":
            table = pd.read_parquet(file)
            records = ((i, r) for i, r in enumerate(table.to_dict("records"), start=1))
        else:
            records = read_records(file)
        df = frog_frame(records, str(file), split)
    else:
        from datasets import load_dataset

        ds = load_dataset(str(source), task, split=split)
        df = frog_frame(enumerate(ds, start=1), f"{source}/{task}/{split}", split)
    df["split"] = split
    return df


def frog_test_source(source: str, test_source: str = "") -> str:
    """Where FRoG-hard (the test split) is read from: ``test_source`` if set, else
    ``source``, which must then hold both splits (a directory or a hub id).

    A single file holds one split: used as both it would be its own test set (every test
    item also trained on), so :class:`DataError` says how to give the test split its own.
    """
    test = test_source or source
    if Path(test).is_file() and Path(test).resolve() == Path(source).resolve():
        raise DataError(
            f"data.source: {source} is a single file, so FRoG-hard would be read from the "
            "same file as FRoG-easy (every test item also a training item). Set "
            "data.test_source to the hard split's file, or point data.source at a "
            "directory holding easy.jsonl and hard.jsonl")
    return test


def split_train_val(df: pd.DataFrame, train_frac: float = 0.8, seed: int = 0):
    """Class-stratified split: per class, round(train_frac * n_q) rows go to train.

    Table dataset_stats: 2,044 easy items -> 1,636 / 408. Both parts keep ``df``'s order.
    """
    rng = np.random.default_rng(seed)
    train_idx = []
    for label in sorted(df["label"].unique()):
        idx = df.index[df["label"] == label].to_numpy()
        take = int(round(train_frac * len(idx)))
        train_idx.extend(rng.permutation(idx)[:take])
    mask = df.index.isin(train_idx)
    return df[mask].copy(), df[~mask].copy()


def largest_remainder(weights: dict[int, int], n: int, min_each: int = 0,
                      caps: dict[int, int] | None = None) -> dict[int, int]:
    """Split ``n`` over keys: ``min_each`` per key, the rest in proportion to
    ``weights - min_each`` by largest remainder (ties to the smaller key), never above ``caps``.
    """
    keys = sorted(weights)
    caps = caps or {k: n for k in keys}
    if n > sum(caps.values()):
        raise ValueError(f"budget {n} exceeds the {sum(caps.values())} available examples")
    base = {k: min(min_each, caps[k]) for k in keys}
    if sum(base.values()) > n:
        raise ValueError(f"budget {n} is below {min_each} per class x {len(keys)}")
    spare = {k: max(weights[k] - base[k], 0) for k in keys}
    spare_total = sum(spare.values()) or 1
    rest = n - sum(base.values())
    quota = {k: rest * spare[k] / spare_total for k in keys}
    alloc = {k: min(base[k] + int(np.floor(quota[k])), caps[k]) for k in keys}
    order = sorted(keys, key=lambda k: (-(quota[k] - np.floor(quota[k])), k))
    while sum(alloc.values()) < n:
        for k in order:
            if sum(alloc.values()) < n and alloc[k] < caps[k]:
                alloc[k] += 1
    return alloc


def stratified_counts(class_counts: dict[int, int], n: int, min_per_class: int = 1):
    """Per-class sizes of a class-stratified sample of ``n`` from ``class_counts`` rows."""
    return largest_remainder(class_counts, n, min_per_class, caps=class_counts)


def few_shot_subset(df: pd.DataFrame, n: int, seed: int = 0, min_per_class: int = 1):
    """Class-stratified subsample of ``n`` training rows (App. D.2 budgets 16..512)."""
    counts = df["label"].value_counts().to_dict()
    alloc = stratified_counts(counts, n, min_per_class)
    rng = np.random.default_rng(seed)
    keep = []
    for label in sorted(alloc):
        idx = df.index[df["label"] == label].to_numpy()
        keep.extend(rng.permutation(idx)[: alloc[label]])
    return df[df.index.isin(keep)].copy()


def format_prompt(question: str, classes: tuple[str, ...] = FROG_CLASSES,
                  template: str = PROMPT_TEMPLATE) -> str:
    """The App. C.2 multiple-choice prompt around ``question`` ([MASK] shown as ___)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    options = " ".join(f"({letters[i]}) {name}" for i, name in enumerate(classes))
    return template.format(sentence=question.replace("[MASK]", "___"), options=options)
