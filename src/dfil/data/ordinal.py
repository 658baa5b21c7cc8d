"""The cross-task ordinal datasets (Table crosstask_full, fewshot_sst5): SST-5 and STS22-en.

Neither has a proportion, yet lambda_p needs one: p is derived from the label or score
(docs/reproduction-notes.md, note R-ordinal-p). STS22's 5 buckets are not given either
(note R-sts22).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dfil.data.io import parquet_records, prepared_split, read_records
from dfil.data.splits import check_unique_ids
from dfil.util.errors import DataError

SST5_HUB_ID = "SetFit/sst5"
STS22_HUB_ID = "mteb/sts22-crosslingual-sts"
SST5_CLASSES = ("very negative", "negative", "neutral", "positive", "very positive")
STS22_CLASSES = ("unrelated", "slightly similar", "somewhat similar", "similar", "equivalent")
#: Equal-width buckets of STS22's 1-4 similarity scale (inner edges).
STS22_EDGES = (1.6, 2.2, 2.8, 3.4)


def label_proportion(labels, num_classes: int = 5, mode: str = "midpoint") -> np.ndarray:
    """p for an ordinal label: bucket midpoint (k + 0.5)/Q, or k/(Q - 1) for ``"index"``."""
    k = np.asarray(labels, dtype=np.float64)
    if mode == "midpoint":
        return (k + 0.5) / num_classes
    if mode == "index":
        return k / (num_classes - 1)
    raise ValueError(f"unknown proportion mode {mode!r}; expected 'midpoint' or 'index'")


def load_sst5(source: str | Path = SST5_HUB_ID, split: str = "test",
              p_mode: str = "midpoint") -> pd.DataFrame:
    """SST-5 from a local ``stsa.fine.*`` file ("label sentence" lines), a directory of
    prepared splits (``<split>.parquet`` with text and label, as a hub fetch of
    SetFit/sst5 writes them), or the hub."""
    path = Path(source)
    rows = []
    if path.is_dir():
        file = prepared_split(path, split)
        for i, r in parquet_records(file):
            rows.append({"id": f"sst5-{split}-{i}", "text": r["text"], "label": int(r["label"]),
                         "origin": f"{file}:{i}"})
    elif path.is_file():
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            head, _, text = line.partition(" ")
            if head not in {"0", "1", "2", "3", "4"} or not text.strip():
                raise DataError(f"{path}:{lineno}: expected '<label 0-4> <sentence>', "
                                f"got {line[:40]!r}")
            rows.append({"id": f"sst5-{split}-{lineno}", "text": text.strip(),
                         "label": int(head), "origin": f"{path}:{lineno}"})
    else:
        from datasets import load_dataset

        for i, r in enumerate(load_dataset(str(source), split=split), start=1):
            rows.append({"id": f"sst5-{split}-{i}", "text": r["text"], "label": int(r["label"]),
                         "origin": f"{source}/{split}:{i}"})
    if not rows:
        raise DataError(f"{source}: no SST-5 rows")
    df = pd.DataFrame(rows)
    check_unique_ids(df, str(source))
    df["label_name"] = [SST5_CLASSES[k] for k in df["label"]]
    df["p"] = label_proportion(df["label"], 5, p_mode)
    return df


def sts22_bucket(score: float, edges=STS22_EDGES) -> int:
    """Bucket index of an STS22 score: #{edges <= score}."""
    return int(np.searchsorted(np.asarray(edges), score, side="right"))


def load_sts22(source: str | Path = STS22_HUB_ID, split: str = "test",
               edges=STS22_EDGES) -> pd.DataFrame:
    """STS22 English pairs (local JSON/JSONL with sentence1, sentence2, score; a directory of
    prepared splits, ``en/<split>.parquet``, as a hub fetch writes them; or the hub's ``en``
    subset), bucketed into 5 ordered classes; p = (score - 1) / 3."""
    path = Path(source)
    if path.is_dir():
        source = prepared_split(path, split, "en")
        records = parquet_records(source)
    elif path.is_file():
        records = read_records(path)
    else:
        from datasets import load_dataset

        records = enumerate(load_dataset(str(source), "en", split=split), start=1)
    rows = []
    for line, r in records:
        where = f"{source}:{line}"
        try:
            score = float(r["score"])
            s1, s2 = r["sentence1"], r["sentence2"]
        except (KeyError, TypeError, ValueError) as err:
            raise DataError(
                f"{where}: needs sentence1, sentence2 and a numeric score ({err})"
            ) from None
        if not 1.0 <= score <= 4.0:
            raise DataError(f"{where}: score {score} outside STS22's 1-4 scale")
        label = sts22_bucket(score, edges)
        rows.append({"id": f"sts22-{split}-{line}", "text": f"Sentence 1: {s1}\nSentence 2: {s2}",
                     "label": label, "label_name": STS22_CLASSES[label],
                     "p": (score - 1.0) / 3.0, "score": score, "origin": where})
    if not rows:
        raise DataError(f"{source}: no STS22 rows")
    df = pd.DataFrame(rows)
    check_unique_ids(df, str(source))
    return df
