"""Everything the paper measures on one trained model, from its predictions (numpy only).

Inputs are :class:`dfil.engine.predict.Predictions` (or label arrays) for each evaluation set plus
the model's MF centers; outputs are plain dicts that go into ``metrics.json``.
Accuracies are fractions in [0, 1]; tables turn them into percentages.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfil.core.inference import ensemble, gaussian_argmax, mf_labels, nearest_center, shift_factor
from dfil.core.metrics import pairwise_violations


def path_labels(preds, centers, alpha: float | None) -> dict[str, np.ndarray]:
    """Labels of each available path: main (argmax; CORAL/CORN rank decoding), MF
    (nearest center), ensemble."""
    out = {}
    if preds.main_probs is not None:
        out["main"] = preds.main_labels
    mf = mf_labels(preds.p, preds.mf_scores, centers)
    if mf is not None:
        out["mf"] = mf
    if alpha is not None and preds.main_probs is not None and preds.mf_scores is not None:
        out["ensemble"] = ensemble(preds.main_probs, preds.mf_probs, alpha).argmax(axis=1)
    return out


def select_alpha(preds, gold: np.ndarray, grid: Sequence[float]) -> float | None:
    """Ensemble weight with the best validation accuracy (first of equals in grid order)."""
    if preds.main_probs is None or preds.mf_scores is None:
        return None
    accs = [float((ensemble(preds.main_probs, preds.mf_probs, a).argmax(1) == gold).mean())
            for a in grid]
    return float(grid[int(np.argmax(accs))])


def grid_check(centers, widths, sizes: Sequence[int]) -> dict:
    """Violations on uniform grids of n points in [0, 1] (App. F.4): nearest center, which
    Thm 1 makes 0, and Gaussian argmax, which the Remark says can flip back."""
    out = {}
    for n in sizes:
        grid = np.linspace(0.0, 1.0, int(n))
        nearest = pairwise_violations(grid, nearest_center(grid, centers))
        row = {"nearest_center": nearest.n_violations, "nearest_center_rate": nearest.rate}
        if widths is not None:
            row["gaussian_argmax"] = pairwise_violations(
                grid, gaussian_argmax(grid, centers, widths)).n_violations
        out[str(int(n))] = row
    return out


def _acc(pred, gold) -> float:
    return float((np.asarray(pred) == np.asarray(gold)).mean())


def _by_depth(pred, gold, depth) -> dict:
    out = {"all": _acc(pred, gold)}
    for d in sorted(set(depth.tolist())):
        out[f"depth{d}"] = _acc(pred[depth == d], gold[depth == d])
    return out


def compositional_metrics(rows: list[dict], preds, centers, main: np.ndarray | None) -> dict:
    """Table compositional / comp_perseed protocols (Sec. 5.2).

    text_only: main classifier on the composed sentence. from_text: p_hat from the text,
    shifted by the model's own centers of the outer quantifiers, nearest center. oracle:
    the same with the true p_base. Ground truths: QuRe-based (fixed centers, in the rows)
    and self-consistent (the model's centers for both shift and labels).
    """
    depth = np.array([r["depth"] for r in rows])
    gold_qure = np.array([r["qure_label"] for r in rows])
    out: dict = {}
    if main is not None:
        out["text_only"] = {"qure": _by_depth(main, gold_qure, depth)}
    if centers is None or preds.p is None:
        return out
    p_base = np.array([r["p_base"] for r in rows])
    factor = np.array([shift_factor(centers, r["outer"]) for r in rows])
    gold_self = nearest_center(factor * p_base, centers)
    from_text = nearest_center(factor * preds.p, centers)
    oracle = gold_self  # the oracle's prediction is the self-consistent truth itself
    out["from_text"] = {"qure": _by_depth(from_text, gold_qure, depth),
                        "self": _by_depth(from_text, gold_self, depth)}
    out["oracle"] = {"qure": _by_depth(oracle, gold_qure, depth),
                     "self": _by_depth(oracle, gold_self, depth)}
    if main is not None:
        out["text_only"]["self"] = _by_depth(main, gold_self, depth)
    out["extraction_error"] = float(np.abs(preds.p - p_base).mean())
    return out


def csmc_metrics(rows: list[dict], labels_a: dict, labels_b: dict,
                 ties: str = "consistent") -> dict:
    """Consistency (%-of-pairs in [0, 1]) of each path: pred(a) <= pred(b) for p_a < p_b."""
    domains = np.array([r["domain"] for r in rows])
    out = {}
    for path in labels_a:
        a, b = labels_a[path], labels_b[path]
        ok = (a <= b) if ties == "consistent" else (a < b)
        out[path] = {"consistency": float(ok.mean()),
                     "by_domain": {d: float(ok[domains == d].mean())
                                   for d in sorted(set(domains.tolist()))},
                     "per_pair": ok.astype(int).tolist()}
    return out


def _exact_off1(pred, gold, cats) -> dict:
    err = np.abs(np.asarray(pred) - gold)
    out = {"exact": float((err == 0).mean()), "off_by_one": float((err <= 1).mean())}
    for c in sorted(set(cats.tolist())):
        out[c] = {"exact": float((err[cats == c] == 0).mean()),
                  "off_by_one": float((err[cats == c] <= 1).mean())}
    return out


def ipr_metrics(rows: list[dict], preds, centers, main: np.ndarray | None) -> dict:
    """Table ipr_full: exact and off-by-one for text (MF on p_hat), oracle (true implied
    proportion through the learned centers) and the main classifier."""
    gold = np.array([r["label"] for r in rows])
    cats = np.array([r["category"] for r in rows])
    out = {}
    if main is not None:
        out["main"] = _exact_off1(main, gold, cats)
    if centers is not None and preds.p is not None:
        out["text"] = _exact_off1(nearest_center(preds.p, centers), gold, cats)
        oracle = nearest_center(np.array([r["p"] for r in rows]), centers)
        out["oracle"] = _exact_off1(oracle, gold, cats)
    return out


def entailment_metrics(rows: list[dict], centers, labels_i: dict, labels_j: dict) -> dict:
    """MF-based (c_Qi <= c_Qj against the gold order) and label-based (pred_i <= pred_j)."""
    gold = np.array([r["entails"] for r in rows])
    out = {}
    if centers is not None:
        c = np.asarray(centers)
        mf_rule = np.array([c[r["qi"]] <= c[r["qj"]] for r in rows])
        out["mf_centers"] = _acc(mf_rule, gold)
    for path in labels_i:
        out[f"labels_{path}"] = _acc(labels_i[path] <= labels_j[path], gold)
    return out


def naturalistic_metrics(rows: list[dict], preds, centers, main: np.ndarray | None) -> dict:
    """Table naturalistic: from-text (p_hat x learned c_Q1, nearest center) and text-only,
    both against the fixed-QuRe ground truth."""
    gold = np.array([r["qure_label"] for r in rows])
    out = {}
    if main is not None:
        out["text_only"] = _acc(main, gold)
    if centers is not None and preds.p is not None:
        factor = np.array([shift_factor(centers, r["outer"]) for r in rows])
        out["from_text"] = _acc(nearest_center(factor * preds.p, centers), gold)
    return out
