"""MF-branch inference rules (numpy in, numpy out): Thm 1, Thm 2, entailment, ensembles.

Nearest-center inference depends on centers only (Sec. 4.2), so these functions take the
centers as an array and never touch torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["nearest_center", "mf_labels", "shift_factor", "compose", "entails", "softmax",
           "ensemble", "gaussian_argmax"]

_CHUNK = 1 << 18


def nearest_center(p, centers) -> np.ndarray:
    """q_hat(p) = argmin_q |p - c_q|, ties to the smallest index (Thm 1).

    ``p`` any shape, ``centers [Q]`` -> int labels of ``p``'s shape. For non-decreasing
    centers the rule is evaluated as in the proof of Thm 1: q_hat(p) = #{q : b_q < p} with
    midpoints b_q = (c_q + c_{q+1}) / 2, which keeps it monotone in floating point too
    (two centers a few ulps apart can make rounded distances |p - c_q| disagree with exact
    ones). Unordered centers (the "no ordering" ablation) use the distances directly.
    """
    p = np.asarray(p, dtype=np.float64)
    c = np.asarray(centers, dtype=np.float64)
    if c.ndim != 1 or c.size == 0:
        raise ValueError(f"centers must be a non-empty 1-D array, got shape {c.shape}")
    if np.all(c[1:] >= c[:-1]):
        return np.searchsorted((c[1:] + c[:-1]) / 2, p, side="left").astype(np.int64)
    flat = p.reshape(-1)
    out = np.empty(flat.shape, dtype=np.int64)
    for start in range(0, flat.size, _CHUNK):
        block = flat[start:start + _CHUNK]
        out[start:start + _CHUNK] = np.abs(block[:, None] - c[None, :]).argmin(axis=1)
    return out.reshape(p.shape)


def mf_labels(p, mf_scores, centers) -> np.ndarray | None:
    """MF-branch labels ``[N]``: nearest center on ``p [N]`` (Sec. 4.2), or the argmax of
    ``mf_scores [N, Q]`` (the no-MF ablation's Linear(1, Q) logits) when ``centers`` is
    None; None when the method has no MF path (``p`` or ``mf_scores`` None)."""
    if p is None or mf_scores is None:
        return None
    if centers is None:
        return np.asarray(mf_scores).argmax(axis=1)
    return nearest_center(p, centers)


def shift_factor(centers, outer) -> np.ndarray | float:
    """prod_i c[outer_i]: ``outer`` a sequence of class indices, or ``[N, depth]`` per row."""
    c = np.asarray(centers, dtype=np.float64)
    idx = np.asarray(outer, dtype=np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= c.size):
        raise ValueError(f"outer indices {idx.tolist()} out of range for {c.size} centers")
    if idx.ndim <= 1:
        return float(np.prod(c[idx]))
    return np.prod(c[idx], axis=-1)


def compose(p, centers, outer: Sequence[int] | np.ndarray) -> np.ndarray:
    """Proportional-shift composition (Sec. 4.4, Thm 2): nearest_center(p * prod c[outer]).

    "Q1 of Q2" at base proportion p has ``outer = [Q1]``; "Q1 of Q2 of Q3" has
    ``outer = [Q1, Q2]``. ``outer`` may also be ``[N, depth]``, one row per entry of ``p [N]``.
    """
    return nearest_center(np.asarray(p, dtype=np.float64) * shift_factor(centers, outer),
                          centers)


def entails(centers, qi: int, qj: int) -> bool:
    """MF entailment Q_i => Q_j, tested as c_{Q_i} <= c_{Q_j} (Sec. 5.3)."""
    c = np.asarray(centers, dtype=np.float64)
    return bool(c[qi] <= c[qj])


def softmax(scores, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``."""
    s = np.asarray(scores, dtype=np.float64)
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ensemble(main_probs, mf_probs, alpha: float) -> np.ndarray:
    """Convex mix alpha * main + (1 - alpha) * MF of ``[N, Q]`` probabilities (Table crosstask).

    MF "probabilities" are softmax(mu) (:func:`softmax`), an assumption the paper implies.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"ensemble weight alpha must lie in [0, 1], got {alpha}")
    main = np.asarray(main_probs, dtype=np.float64)
    mf = np.asarray(mf_probs, dtype=np.float64)
    if main.shape != mf.shape:
        raise ValueError(f"shape mismatch: main {main.shape} vs MF {mf.shape}")
    return alpha * main + (1.0 - alpha) * mf


def gaussian_argmax(p, centers, widths) -> np.ndarray:
    """argmax_q mu_q(p), the training-time rule that Remark (rem:gaussian_argmax) warns about.

    Ties go to the smallest index. ``p`` any shape -> labels of the same shape.
    """
    p = np.asarray(p, dtype=np.float64)
    c = np.asarray(centers, dtype=np.float64)
    s = np.asarray(widths, dtype=np.float64)
    z = np.abs(p[..., None] - c) / s
    return z.argmin(axis=-1)
