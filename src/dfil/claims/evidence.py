"""A declared claim's test run on the seeds (pure: numpy, scipy, statsmodels).

Superiority: a one-sided t-test in the paper's direction (``p_for``) and the same test the
other way (``p_against``: an effect of the opposite sign); where the estimate falls within
the claim's tolerance, ``p_against`` is TOST's instead (a parity established against a
claimed difference). Parity: TOST with the declared margin (``p_for``) and a one-sided test
that the difference lies beyond the margin on the estimate's side (``p_against``). The
minimum detectable effect is the smallest difference the test finds with power 0.8 at
alpha 0.05 on these n, from the observed spread (statsmodels' power solvers times the
pooled sd, or the sd of the per-seed differences).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps
from statsmodels.stats.power import TTestIndPower, TTestPower
from statsmodels.stats.weightstats import ttost_ind, ttost_paired

from dfil.claims.declare import Declared
from dfil.claims.degenerate import no_evidence
from dfil.render.voiding import sides_degenerate, voiding

ALPHA = 0.05
POWER = 0.8
_ALT = {1: "greater", -1: "less"}


@dataclass(frozen=True)
class Evidence:
    """What the seeds say about one claim: the estimate (a minus b) with its 95%
    interval, the p of its declared test (``p_for``) and of the test the other way
    (``p_against``), both None with fewer than two seeds a side; ``degenerate``: why the
    seeds are no evidence ("" when they are)."""

    test: str
    n_a: int
    n_b: int | None
    estimate: float
    ci_low: float | None = None
    ci_high: float | None = None
    p_for: float | None = None
    p_against: float | None = None
    mde: float | None = None
    degenerate: str = ""
    #: The test the other way, in words.
    against: str = ""


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
    return math.sqrt(num / (x.size + y.size - 2))


def mde_two(n_a: int, n_b: int, sd: float) -> float | None:
    """Minimum detectable effect of a one-sided two-sample t-test (alpha 0.05, power 0.8)
    with n_a and n_b seeds and pooled sd ``sd``."""
    try:
        d = TTestIndPower().solve_power(effect_size=None, nobs1=n_a, alpha=ALPHA, power=POWER,
                                        ratio=n_b / n_a, alternative="larger")
    except (ValueError, RuntimeError):
        return None
    return float(d) * sd


def mde_one(n: int, sd: float) -> float | None:
    """Minimum detectable effect of a one-sided one-sample (or paired) t-test on n
    differences with sd ``sd`` (alpha 0.05, power 0.8)."""
    try:
        d = TTestPower().solve_power(effect_size=None, nobs=n, alpha=ALPHA, power=POWER,
                                     alternative="larger")
    except (ValueError, RuntimeError):
        return None
    return float(d) * sd


def _test_name(claim: Declared, design: str) -> str:
    kind = {"one-sample": "one-sample t", "paired": "paired t", "welch": "Welch's t"}
    design = kind[design]
    if claim.test == "parity":
        return f"TOST ({design}), margin ±{claim.tol:g}"
    side = "> 0" if claim.sign > 0 else "< 0"
    return f"{design}, one-sided (Δ {side}, the paper's direction)"


def _exact(claim: Declared, est: float) -> tuple[float, float]:
    """(p_for, p_against) of a difference every seed gives exactly (no spread: the
    limits of the t-tests, reported but never counted)."""
    if claim.test == "parity":
        return (0.0, 1.0) if abs(est) < claim.tol else (1.0, 0.0)
    return (0.0, 1.0) if est * claim.sign > 0 else (1.0, 0.0)


def shifted(x, y, shift: float, alternative: str) -> float:
    """One-sided p that mean(x) - mean(y) (Welch's t; ``y`` None: mean(x), one-sample t)
    is greater (``alternative="greater"``) or less than ``shift``."""
    if y is not None:
        return float(sps.ttest_ind(x - shift, y, equal_var=False,
                                   alternative=alternative).pvalue)
    return float(sps.ttest_1samp(x - shift, 0.0, alternative=alternative).pvalue)


def tost(x, y, tol: float) -> float:
    """TOST p that mean(x) - mean(y) (``y`` None: mean(x)) lies within ±tol."""
    if y is not None:
        return float(ttost_ind(x, y, -tol, tol, usevar="unequal")[0])
    return float(ttost_paired(x, np.zeros_like(x), -tol, tol)[0])


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
    if flat:
        p_for, p_against = _exact(claim, est)
        why = ("every seed gives the same value on both sides" if y is not None
               else "every seed gives the same difference")
        return Evidence(name, n_a, n_b, est, est, est, p_for, p_against, None,
                        f"degenerate ({why}: zero variance)")
    r = sps.ttest_1samp(x, 0.0) if y is None else sps.ttest_ind(x, y, equal_var=False)
    ci = r.confidence_interval(0.95)
    mde = (mde_one(n_a, float(x.std(ddof=1))) if y is None
           else mde_two(n_a, n_b, pooled_sd(x, y)))
    side = 1 if est >= 0 else -1
    if claim.test == "parity":
        p_for = tost(x, y, claim.tol)
        p_against = shifted(x, y, side * claim.tol, _ALT[side])
    else:
        p_for = shifted(x, y, 0.0, _ALT[claim.sign])
        p_against = (tost(x, y, claim.tol) if abs(est) < claim.tol
                     else shifted(x, y, 0.0, _ALT[-claim.sign]))
    return Evidence(name, n_a, n_b, est, float(ci.low), float(ci.high), p_for, p_against, mde,
                    against=_against(claim, est))


def _against(claim: Declared, est: float) -> str:
    if claim.test == "parity":
        return f"a difference beyond the margin ±{claim.tol:g}, one-sided"
    if abs(est) < claim.tol:
        return f"TOST within ±{claim.tol:g} (a parity against the claimed difference)"
    return "the one-sided test the other way (the opposite sign)"
