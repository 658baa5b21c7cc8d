"""``predictions.parquet`` against ``metrics.json``: every number the per-item predictions
determine, computed once here for evaluation and recomputed here when a run is read
(pure: numpy, pandas).

A run's test and QuRe accuracy blocks (accuracy, per-class accuracy, n, pairwise
monotonicity against the true proportion), the block of the path chosen on validation
and the error of the predicted proportion follow from the rows of ``predictions.parquet``
alone. :func:`predictions_problem` recomputes them and names the first that differs from
the metrics record: the record was edited, or the two files are not of one evaluation.
Counts must be equal; fractions may differ by a few units in the last place (the same
arithmetic on the same rows gives the same bits, but the check does not rely on it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from dfil.contracts.predictions import PATHS
from dfil.core.metrics import pairwise_violations

#: The accuracy blocks of metrics.json that predictions.parquet determines: block -> set.
CHECKED = {"test": "test", "qure": "qure"}
#: How far a recomputed fraction may be from the recorded one, in units in the last place.
ULPS = 4


def accuracy_block(labels: np.ndarray, gold: np.ndarray, p: np.ndarray | None,
                   num_classes: int) -> dict:
    """Accuracy, per-class accuracy (None for absent classes) and pairwise monotonicity
    of ``labels [N]`` against ``gold [N]``, monotonicity against proportions ``p [N]``."""
    per_class = [float((labels[gold == k] == k).mean()) if np.any(gold == k) else None
                 for k in range(num_classes)]
    block = {"acc": float((labels == gold).mean()), "per_class_acc": per_class, "n": len(gold)}
    if p is not None:
        v = pairwise_violations(p, labels)
        block.update(mono_rate=v.rate, mono_magnitude=v.mean_magnitude, mono_pairs=v.n_pairs,
                     mono_violations=v.n_violations)
    return block


def _differs(recorded, computed) -> bool:
    if isinstance(recorded, bool) or isinstance(computed, bool):
        return recorded is not computed
    if recorded is None or computed is None:
        return recorded is not computed
    if isinstance(recorded, int) and isinstance(computed, int):
        return recorded != computed
    scale = max(abs(float(recorded)), abs(float(computed)))
    return abs(float(recorded) - float(computed)) > ULPS * math.ulp(scale)


def _compare(recorded, computed, where: str) -> Iterator[str]:
    """The dotted key of every number of ``recorded`` that ``computed`` does not match."""
    if isinstance(computed, Mapping):
        for key, value in computed.items():
            yield from _compare(recorded.get(key) if isinstance(recorded, Mapping) else None,
                                value, f"{where}.{key}")
    elif isinstance(computed, list):
        if not isinstance(recorded, list) or len(recorded) != len(computed):
            yield where
            return
        for i, (a, b) in enumerate(zip(recorded, computed, strict=True)):
            yield from _compare(a, b, f"{where}.{i}")
    elif _differs(recorded, computed):
        yield where


def expected(metrics: Mapping, rows: pd.DataFrame) -> dict:
    """What ``rows`` (predictions.parquet) determine of ``metrics``, in its layout: each
    checked block's paths, the best path's test block, ``p_mae``."""
    out: dict = {}
    for block, set_name in CHECKED.items():
        recorded = metrics.get(block) or {}
        part = rows[rows["set"] == set_name]
        gold = part["gold"].to_numpy(dtype=np.int64)
        p = part["p_true"].to_numpy(dtype=np.float64) if block == "test" else None
        for path in PATHS:
            if isinstance(recorded.get(path), Mapping):
                q = len(recorded[path].get("per_class_acc") or ())
                labels = part[f"{path}_label"].to_numpy(dtype=np.int64)
                out.setdefault(block, {})[path] = accuracy_block(labels, gold, p, q)
    test = out.get("test", {})
    if metrics.get("best_path") in test:
        test["best"] = test[metrics["best_path"]]
    if "p_mae" in metrics:
        part = rows[rows["set"] == "test"]
        out["p_mae"] = float(np.abs(part["p_hat"].to_numpy() - part["p_true"].to_numpy())
                             .mean())
    return out


def predictions_problem(metrics: Mapping, path: str | Path) -> str | None:
    """What in ``metrics`` the predictions at ``path`` contradict, in one phrase naming
    the first such key with both values (None: every number they determine matches)."""
    columns = ["set", "gold", "p_true", "p_hat", *(f"{p}_label" for p in PATHS)]
    try:
        rows = pd.read_parquet(path, columns=columns)
    except Exception as err:  # pyarrow's errors for a damaged file are of many types
        return f"its {Path(path).name} cannot be read ({' '.join(str(err).split())[:120]})"
    if not len(rows):
        return f"its {Path(path).name} holds no predictions"
    computed = expected(metrics, rows)
    for key in _compare(metrics, computed, ""):
        key = key.lstrip(".")
        return (f"{key} is {_at(metrics, key)} but {Path(path).name} gives "
                f"{_at(computed, key)}")
    return None


def _at(tree, key: str):
    """The value at dotted ``key`` of ``tree`` (None where it has none)."""
    for part in key.split("."):
        if isinstance(tree, list):
            tree = tree[int(part)] if int(part) < len(tree) else None
        elif isinstance(tree, Mapping):
            tree = tree.get(part)
        else:
            return None
    return tree
