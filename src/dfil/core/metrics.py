"""Pure metrics (numpy only): pairwise monotonicity violations (App. F.4, Table monotonicity)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Violations", "pairwise_violations"]

@dataclass(frozen=True)
class Violations:
    """Pairwise monotonicity of predictions against proportions.

    rate : n_violations / n_pairs (0.0 when there are no pairs).
    mean_magnitude : mean of pred_i - pred_j over violating pairs (0.0 when none).
    n_pairs : pairs with p_i < p_j (pairs tied in p are excluded).
    n_violations : such pairs with pred_i > pred_j.
    """

    rate: float
    mean_magnitude: float
    n_pairs: int
    n_violations: int


def pairwise_violations(p, pred) -> Violations:
    """Count pairs with p_i < p_j and pred_i > pred_j, in O(N log N log K).

    ``p [N]`` proportions, ``pred [N]`` ordinal predictions (K distinct values).

    After a stable sort by p, a pair (i, j) with pred_i > pred_j is decided at the highest
    bit where the ranks of pred_i and pred_j differ: there they share the higher bits
    ("prefix"), i has a 1 and j a 0. So per bit level, sorting stably by prefix (which keeps
    p order inside each prefix) and counting, for each 0 element, the 1 elements of its
    prefix that lie before its run of equal p counts every violating pair exactly once.
    """
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    pred = np.asarray(pred).reshape(-1)
    if p.shape != pred.shape:
        raise ValueError(f"p and pred differ in length: {p.size} vs {pred.size}")
    n = p.size
    if n < 2:
        return Violations(0.0, 0.0, 0, 0)
    order = np.argsort(p, kind="stable")
    group, n_pairs = _p_groups(p[order])
    rank, n_levels = _ranks(pred[order])
    val = pred[order].astype(np.float64)
    n_bits = max(1, int(np.ceil(np.log2(max(n_levels, 2)))))
    count = 0
    magnitude = 0.0
    for b in range(n_bits - 1, -1, -1):
        k, s = _violations_at_bit(rank, group, val, b, top=b == n_bits - 1)
        count += k
        magnitude += s
    rate = count / n_pairs if n_pairs else 0.0
    mean_mag = magnitude / count if count else 0.0
    return Violations(rate, mean_mag, n_pairs, count)


def _p_groups(p_sorted: np.ndarray) -> tuple[np.ndarray, int]:
    """``[N]`` the index of each element's run of equal p in sorted ``p_sorted``, and the
    number of pairs not tied in p."""
    n = p_sorted.size
    new_p = np.empty(n, dtype=bool)
    new_p[0] = True
    np.not_equal(p_sorted[1:], p_sorted[:-1], out=new_p[1:])
    tie_sizes = np.diff(np.flatnonzero(np.append(new_p, True)))
    n_pairs = n * (n - 1) // 2 - int((tie_sizes * (tie_sizes - 1) // 2).sum())
    return np.cumsum(new_p) - 1, n_pairs


def _violations_at_bit(rank: np.ndarray, group: np.ndarray, val: np.ndarray, b: int,
                       top: bool) -> tuple[int, float]:
    """The violating pairs decided at bit ``b`` of the ranks (all ``[N]``, in p order),
    and the sum of their pred_i - pred_j. ``top``: the highest bit, whose prefix is 0 for
    every element (no sort needed)."""
    n = rank.size
    positions = np.arange(n)
    prefix = rank >> (b + 1)
    perm = positions if top else np.argsort(prefix, kind="stable")
    pre, grp, bit, v = prefix[perm], group[perm], (rank[perm] >> b) & 1, val[perm]
    seg_change = np.empty(n, dtype=bool)
    seg_change[0] = True
    np.not_equal(pre[1:], pre[:-1], out=seg_change[1:])
    run_change = seg_change.copy()
    run_change[1:] |= grp[1:] != grp[:-1]
    seg_start = np.maximum.accumulate(np.where(seg_change, positions, 0))
    run_start = np.maximum.accumulate(np.where(run_change, positions, 0))
    ones = np.concatenate(([0], np.cumsum(bit)))
    ones_val = np.concatenate(([0.0], np.cumsum(bit * v)))
    zero = bit == 0
    k = ones[run_start[zero]] - ones[seg_start[zero]]
    s = ones_val[run_start[zero]] - ones_val[seg_start[zero]]
    return int(k.sum()), float((s - k * v[zero]).sum())


def _ranks(pred: np.ndarray) -> tuple[np.ndarray, int]:
    """Order-preserving non-negative integer codes of ``pred`` and their number of levels.

    Small-range integer labels (the usual case) are shifted, avoiding a second sort; the
    narrow dtype lets numpy's stable sort use radix sort.
    """
    if np.issubdtype(pred.dtype, np.integer) and pred.size:
        lo, hi = int(pred.min()), int(pred.max())
        if hi - lo < 1 << 15:
            return (pred - lo).astype(np.int16), hi - lo + 1
    values, rank = np.unique(pred, return_inverse=True)
    return rank.reshape(-1), values.size
