"""A declared claim's test run on the seeds (pure: numpy, scipy; the tests, power and
minimum detectable effect are :mod:`dfil.stats`').

One test and one p per claim. A difference in a direction: the two-sided t-test (paired
on the per-seed differences where the claim's seeds pair, one-sample on a signed
entry's own per-seed differences, else Welch's); its sign is read from the estimate
(:func:`dfil.claims.verdict.decide`). A parity with margin m: TOST's p when the estimate
lies within ±m, else the p that the difference lies beyond the margin on the estimate's
side, doubled as a two-sided p is (the side is chosen by the data). Each claim's test is
also the :class:`dfil.stats.Trial` its power and minimum detectable effect are computed
for (at the seeds' own spread: the differences' sd, or the pooled sd for Welch's).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from dfil import stats
from dfil.claims.declare import Declared
from dfil.claims.degenerate import no_evidence
from dfil.render.voiding import sides_degenerate, voiding

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Evidence:
    """What the seeds say about one claim: the estimate (a minus b) with its 95%
    interval, the claim's one ``p`` (None with fewer than two seeds a side or no spread
    at all), the ``trial`` its power and MDE are computed for (None where there is no
    p), and ``degenerate``: why the seeds are no evidence ("" when they are)."""

    test: str
    n_a: int
    n_b: int | None
    estimate: float
    ci_low: float | None = None
    ci_high: float | None = None
    p: float | None = None
    trial: stats.Trial | None = None
    degenerate: str = ""
    #: A parity's margin (None: a directional claim).
    margin: float | None = None


def _values(entry) -> np.ndarray | None:
    if entry is None or entry.kind not in ("stat", "value") or entry.mean is None:
        return None
    if entry.kind == "value":
        return np.array([entry.value], dtype=float)
    return np.asarray(entry.values, dtype=float)


def _paired(a, b) -> np.ndarray:
    """The per-seed differences a - b, aligned by seed."""
    sa, sb = dict(zip(a.seeds, a.values, strict=True)), dict(zip(b.seeds, b.values, strict=True))
    common = sorted(set(sa) & set(sb))
    return np.array([sa[s] - sb[s] for s in common], dtype=float)


def pooled_sd(x: np.ndarray, y: np.ndarray) -> float:
    """sqrt(((n_a-1) s_a² + (n_b-1) s_b²) / (n_a + n_b - 2)), ddof=1 variances."""
    num = (x.size - 1) * x.var(ddof=1) + (y.size - 1) * y.var(ddof=1)
    return float(np.sqrt(num / (x.size + y.size - 2)))


def _test_name(claim: Declared, design: str) -> str:
    kind = {"one-sample": "one-sample t", "paired": "paired t", "welch": "Welch's t"}
    design = kind[design]
    if claim.test == "parity":
        return f"TOST ({design}), margin ±{claim.margin:.3g}"
    side = "> 0" if claim.sign > 0 else "< 0"
    return f"{design}, two-sided (the paper's Δ {side})"


def evaluate(claim: Declared) -> Evidence | None:
    """The evidence on ``claim``; None when a side has no run. A side that predicts one
    class or lies at chance (:mod:`dfil.claims.degenerate`, found when its table was
    resolved), or paired sides whose per-seed differences are all equal, make the
    evidence no evidence, whatever its test says
    (:func:`dfil.render.voiding.sides_degenerate`); a side's zero variance alone does
    not: a paired claim is judged on its differences, a Welch one on both spreads."""
    ev = _evaluate(claim)
    sides = claim.sides
    why = (sides_degenerate(sides) if len(sides) == 2
           else voiding(getattr(sides[0], "degenerate", "") or ""))
    return replace(ev, degenerate=no_evidence(why)) if ev is not None and why else ev


def _evaluate(claim: Declared) -> Evidence | None:
    found = [_values(s) for s in claim.sides]
    if any(v is None or v.size == 0 for v in found):
        return None
    design = claim.design
    if design == "paired" and any(len(s.seeds) != len(s.values) for s in claim.sides):
        design = "welch"  # values whose seeds are unknown cannot be paired
    if design == "paired":
        x, y = _paired(*claim.sides), None
    elif design == "one-sample":
        x, y = found[0], None
    else:
        x, y = found
    n_a, n_b = x.size, (None if y is None else y.size)
    est = float(x.mean() - (0.0 if y is None else y.mean()))
    name = _test_name(claim, design)
    if n_a < 2 or (n_b is not None and n_b < 2):
        return Evidence(name, n_a, n_b, est)
    flat = np.ptp(x) == 0 and (y is None or np.ptp(y) == 0)
    margin = claim.margin if claim.test == "parity" else None
    if flat:
        why = ("every seed gives the same value on both sides" if y is not None
               else "every seed gives the same difference")
        return Evidence(name, n_a, n_b, est, est, est, margin=margin,
                        degenerate=f"degenerate ({why}: zero variance)")
    ci = (sps.ttest_1samp(x, 0.0) if y is None
          else sps.ttest_ind(x, y, equal_var=False)).confidence_interval(0.95)
    trial = (stats.Trial(design, float(x.std(ddof=1)), margin) if y is None
             else stats.Trial("welch", pooled_sd(x, y), margin, n_b / n_a))
    return Evidence(name, n_a, n_b, est, float(ci.low), float(ci.high),
                    claim_p(x, y, est, margin), trial, margin=margin)


def claim_p(x: np.ndarray, y: np.ndarray | None, est: float, margin: float | None) -> float:
    """The claim's one p on samples ``x`` and ``y`` (None: ``x`` are differences) with
    estimate ``est``: two-sided t for a direction (``margin`` None); for a parity, TOST's
    within ±margin when |est| < margin, else twice the one-sided p of a difference
    beyond the margin on the estimate's side (capped at 1)."""
    if margin is None:
        return stats.shifted_t(x, y).pvalue
    if abs(est) < margin:
        return stats.tost(x, y, margin).pvalue
    side = 1 if est > 0 else -1
    one = stats.shifted_t(x, y, side * margin, "greater" if side > 0 else "less").pvalue
    return min(1.0, 2 * one)
