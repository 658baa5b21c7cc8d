"""The contract of ``predictions.parquet`` and what the aggregate keeps of it (pure:
pandas, numpy, hashlib).

One row per evaluated item and set (:data:`COLUMNS`): the set (``test``, ``qure``,
``compositional``, ``csmc_a``/``csmc_b``, ``entailment_a``/``entailment_b``, ``ipr``,
``naturalistic``), the item id, its gold label (-1: none), the true and predicted
proportion, and each path's predicted label (-1: the method has no such path).

A table never reads per-item predictions; the aggregate keeps a few numbers of them per
run (:func:`prediction_facts`), so that degenerate runs are found without reading a
parquet file per table, and each test set's majority-class and chance accuracies
(:func:`baselines`, fractions as ``acc`` is) are table rows like any metric:

- ``pred.<set>.<path>.n``: items predicted;
- ``pred.<set>.<path>.classes``: distinct labels predicted (1: one class for every item);
- ``pred.<set>.<path>.digest``: the predicted labels' sha256 as an integer below 2**53
  (exact as a float), equal across runs exactly when their predictions are (but for a
  collision, 1 in 2**53);
- ``baseline.<set>.majority``, ``baseline.<set>.chance``: accuracy of always predicting
  the set's most frequent gold class, and of a uniform guess (1 / number of classes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from dfil.util.errors import RunFileError

COLUMNS = ["set", "id", "gold", "p_true", "p_hat", "main_label", "mf_label",
           "ensemble_label"]
#: The prediction paths, each a ``<path>_label`` column.
PATHS = ("main", "mf", "ensemble")
#: The path ``metrics.json``'s ``best_path`` names is also kept as this path.
BEST = "best"
#: Metric prefixes of the facts (never a metric of ``metrics.json``).
FACTS, BASELINE = "pred", "baseline"


def read_predictions(path: str | Path) -> pd.DataFrame:
    """``predictions.parquet`` at ``path``; :class:`RunFileError` naming it when it cannot
    be read or lacks a column of :data:`COLUMNS`."""
    try:
        frame = pd.read_parquet(path)
    except Exception as err:  # pyarrow's errors for a damaged file are of many types
        why = " ".join(str(err).split())[:120]
        raise RunFileError(f"{path}: unreadable predictions ({why}); run `dfil evaluate` "
                           "on the run again") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise RunFileError(f"{path}: predictions lack columns {missing}; run `dfil "
                           "evaluate` on the run again")
    return frame


def digest(labels: np.ndarray) -> float:
    """The sha256 of ``labels`` (as int64) cut to an integer below 2**53, as a float."""
    raw = hashlib.sha256(np.asarray(labels, dtype=np.int64).tobytes()).digest()
    return float(int.from_bytes(raw[:8], "big") >> 11)


def _path_facts(prefix: str, labels: np.ndarray) -> dict[str, float]:
    return {f"{prefix}.n": float(labels.size),
            f"{prefix}.classes": float(np.unique(labels).size),
            f"{prefix}.digest": digest(labels)}


def prediction_facts(frame: pd.DataFrame, best_path: str | None = None) -> dict[str, float]:
    """``pred.<set>.<path>.{n,classes,digest}`` of every set and path that predicted
    (items in id order; a path all -1 was not predicted); ``best_path``'s again as
    ``best``."""
    out: dict[str, float] = {}
    for name, rows in frame.groupby("set", sort=True):
        rows = rows.sort_values("id", kind="stable")
        for path in PATHS:
            labels = rows[f"{path}_label"].to_numpy(dtype=np.int64)
            if labels.size and np.any(labels >= 0):
                out.update(_path_facts(f"{FACTS}.{name}.{path}", labels))
                if path == best_path:
                    out.update(_path_facts(f"{FACTS}.{name}.{BEST}", labels))
    return out


def majority_chance(gold: np.ndarray, num_classes: int) -> tuple[float, float]:
    """(majority-class accuracy, chance accuracy) on gold labels ``gold`` [N] of a
    ``num_classes``-way task: the share of the most frequent class, and 1 / num_classes.
    ``ValueError`` for no labels or a label outside 0..num_classes-1."""
    gold = np.asarray(gold, dtype=np.int64)
    if gold.size == 0 or gold.min() < 0 or gold.max() >= num_classes:
        raise ValueError(f"gold labels must be 0..{num_classes - 1}, got "
                         f"{np.unique(gold).tolist()[:10]}")
    counts = np.bincount(gold, minlength=num_classes)
    return float(counts.max() / gold.size), 1.0 / num_classes


def baselines(frame: pd.DataFrame, num_classes: int) -> dict[str, float]:
    """``baseline.<set>.{majority,chance}`` of every set with gold labels."""
    out: dict[str, float] = {}
    for name, rows in frame.groupby("set", sort=True):
        gold = rows["gold"].to_numpy(dtype=np.int64)
        gold = gold[gold >= 0]
        if gold.size and gold.max() < num_classes:
            majority, chance = majority_chance(gold, num_classes)
            out[f"{BASELINE}.{name}.majority"] = majority
            out[f"{BASELINE}.{name}.chance"] = chance
    return out
