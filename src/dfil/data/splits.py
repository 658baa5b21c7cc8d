"""Checks that a task's splits can be trusted (pure pandas).

Every id names one record of its split, and no test item is one that training or
validation also holds, by id or by text: a test item seen in training makes every score
on it meaningless, and nothing downstream could tell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from dfil.util.errors import DataError

_SPACE = re.compile(r"\s+")


def check_unique_ids(df: pd.DataFrame, source: str) -> None:
    """:class:`DataError` naming both places of an id that ``df`` (from ``source``) repeats.

    A place is the row's ``origin`` (``file:line``) when the frame has one, else its
    1-based row number.
    """
    repeated = df["id"].duplicated(keep=False).to_numpy()
    if not repeated.any():
        return
    ids = df["id"].to_numpy()
    first = ids[repeated][0]
    rows = [i for i, v in enumerate(ids) if v == first][:2]
    places = [str(df["origin"].iloc[i]) if "origin" in df else f"{source}: row {i + 1}"
              for i in rows]
    count = int(df["id"].duplicated().sum())
    raise DataError(f"{places[1]}: id {first!r} is already used at {places[0]} ({count} "
                    f"repeated id(s) in {source}); an id must name one record")


def normalize_text(texts: pd.Series) -> pd.Series:
    """Texts compared for overlap: case-folded, whitespace runs as one space, trimmed."""
    return texts.astype(str).map(lambda t: _SPACE.sub(" ", t).strip().casefold())


def overlap_masks(seen: Mapping[str, pd.DataFrame], test: pd.DataFrame,
                  text_col: str = "text") -> tuple[pd.Series, pd.Series]:
    """Two boolean masks over ``test``'s rows: its id, and its normalized text, occur in
    one of the ``seen`` frames (train, val)."""
    ids = set().union(*(set(f["id"].astype(str)) for f in seen.values()))
    texts = set().union(*(set(normalize_text(f[text_col])) for f in seen.values()))
    return test["id"].astype(str).isin(ids), normalize_text(test[text_col]).isin(texts)


def check_test_disjoint(frames: Mapping[str, pd.DataFrame], allowed: int = 0,
                        text_col: str = "text") -> None:
    """Refuse a ``frames["test"]`` sharing more than ``allowed`` items with the other frames.

    :class:`DataError` naming the first shared item's place, how many items are shared by
    id and by text, and the two ways out (``data.test_source``,
    ``data.allowed_test_overlap``).
    """
    test = frames["test"]
    seen = {k: v for k, v in frames.items() if k != "test"}
    by_id, by_text = overlap_masks(seen, test, text_col)
    shared = (by_id | by_text).to_numpy()
    n = int(shared.sum())
    if n <= allowed:
        return
    row = test[shared].iloc[0]
    place = str(row["origin"]) if "origin" in test else f"test id {row['id']!r}"
    raise DataError(
        f"{place}: the test split shares {n} of {len(test)} items with {'/'.join(seen)} "
        f"({int(by_id.sum())} by id, {int(by_text.sum())} by text; first: "
        f"{str(row[text_col])[:60]!r}), which leaks training data into every test score. "
        f"Give the test split its own source (data.test_source); only if the benchmark's "
        f"own splits overlap, allow it with data.allowed_test_overlap: {n} (now {allowed})")
