"""QuRe (Li et al. 2023): the paper's 401-sentence four-quantifier transfer set (Table qure).

Each sentence is scored by FRoG-trained checkpoints without retraining. The mapping of
QuRe's quantifier words onto FRoG's label set and the input text are not given by the
paper (note R-qure-map, R-qure-text).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from dfil.core.quantifiers import FROG_CLASSES
from dfil.data.frog import parse_percentage
from dfil.data.io import parquet_records, prepared_split, read_records
from dfil.data.splits import check_unique_ids
from dfil.util.errors import DataError

QURE_HUB_ID = "billli/QuRe"
#: Rows of the paper's transfer set: QuRe's sentences quantified by few/some/most/all.
QURE_ROWS = 401
#: QuRe word -> FRoG class. The four words the paper keeps have same-named FRoG classes.
QURE_TO_FROG = {"few": "few", "some": "some", "most": "most", "all": "all"}


def qure_text(row: dict) -> tuple[str, bool]:
    """The annotated sentence with its quantifier replaced by [MASK], then the percentage.

    Returns ``(text, fallback)``; when the annotated word is missing from ``quant_sent``
    (3 of the 401 rows), the original sentence is used with a trailing blank instead.
    """
    word = row["quantifier"]
    masked, n = re.subn(rf"\b{re.escape(word)}\b", "[MASK]", row["quant_sent"], count=1,
                        flags=re.IGNORECASE)
    if n:
        return f"{masked} Specifically, {row['percentage']}.", False
    return f"{row['orig_sentence']} The quantifier for {row['percentage']} is [MASK].", True


def load_qure(path: str | Path = QURE_HUB_ID,
              quantifiers: tuple[str, ...] = tuple(QURE_TO_FROG),
              expected_rows: int | None = QURE_ROWS) -> pd.DataFrame:
    """QuRe rows whose quantifier is in ``quantifiers`` (default: the paper's 401).

    ``path`` is a local JSON/JSONL file, a directory of prepared splits (``train.parquet``,
    as a hub fetch writes it) or a hub id. Columns: id, text, label, label_name,
    p (midpoint of a percentage range), percentage, quantifier, text_fallback, origin.
    :class:`DataError` naming the file and both counts unless exactly ``expected_rows``
    rows are kept (a file truncated at a line boundary still parses; None: any count).
    """
    unknown = sorted(set(quantifiers) - set(QURE_TO_FROG))
    if unknown:
        raise DataError(f"no FRoG label for QuRe quantifiers {unknown}")
    source = Path(path)
    if source.is_dir():  # prepared by a hub fetch: the release's one split
        path = prepared_split(source, "train")
        records = parquet_records(path)
    elif source.exists():
        records = read_records(source)
    else:
        from datasets import load_dataset

        records = enumerate(load_dataset(str(path), split="train"), start=1)
    rows = []
    for line, record in records:
        where = f"{path}:{line}"
        for key in ("quantifier", "quant_sent", "orig_sentence", "percentage"):
            if key not in record:
                raise DataError(f"{where}: record has no {key!r}")
        word = str(record["quantifier"]).strip().lower()
        if word not in quantifiers:
            continue
        try:
            p = parse_percentage(record["percentage"])
        except ValueError as err:
            raise DataError(f"{where}: {err}") from None
        text, fallback = qure_text({**record, "quantifier": word})
        label = FROG_CLASSES.index(QURE_TO_FROG[word])
        rows.append({"id": f"qure-{line}", "text": text, "label": label,
                     "label_name": FROG_CLASSES[label], "p": p,
                     "percentage": record["percentage"], "quantifier": word,
                     "text_fallback": fallback, "origin": where})
    if not rows:
        raise DataError(f"{path}: no rows with quantifiers {list(quantifiers)}")
    if expected_rows is not None and len(rows) != expected_rows:
        raise DataError(f"{path}: {len(rows)} rows with quantifiers {list(quantifiers)}, "
                        f"expected {expected_rows} (data.qure_rows): the file is truncated "
                        "or not the QuRe release the transfer set is defined on")
    df = pd.DataFrame(rows)
    check_unique_ids(df, str(path))
    return df
