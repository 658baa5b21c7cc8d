"""Tests from summary statistics, as a reader of the paper must run them (pure).

Two-sample t tests from (mean, sd, n), the range of p that the printed rounding of those
numbers allows (each sample's intervals a :class:`SummaryBox`), paired t from Cohen's
d_z, and the exact Wilcoxon p-values that sign counts allow. Results are
:class:`dfil.stats.samples.TestResult`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
from scipy import optimize
from scipy import stats as sps

from dfil.stats.samples import TestResult

Interval = tuple[float, float]


@dataclass(frozen=True)
class PvalueRange:
    """The two-sided p-values reachable when every mean and sd lies anywhere in its
    interval: ``low``/``high`` and the (mean1, sd1, mean2, sd2) that attain them."""

    low: float
    high: float
    low_at: tuple[float, float, float, float]
    high_at: tuple[float, float, float, float]


def rounding_interval(printed: str) -> Interval:
    """The values that print as ``printed`` when rounded to its last digit.

    ``"50.4"`` -> (50.35, 50.45), ``"0.011"`` -> (0.0105, 0.0115), ``"7"`` -> (6.5, 7.5).
    Both ends are kept (round-half conventions differ between tools). A leading sign is
    kept; ``ValueError`` if ``printed`` is not a plain decimal number.
    """
    text = str(printed).strip().replace("\u2212", "-")
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a printed decimal number: {printed!r}") from None
    if not d.is_finite():
        raise ValueError(f"not a printed decimal number: {printed!r}")
    half = Decimal(5).scaleb(d.as_tuple().exponent - 1)
    return float(d - half), float(d + half)


def welch_from_stats(mean1: float, std1: float, nobs1: int, mean2: float, std2: float,
                     nobs2: int) -> TestResult:
    """Welch's unequal-variance t test from summary statistics (sample sds, ddof=1),
    two-sided; ``df`` is the Welch-Satterthwaite value."""
    _check_n(nobs1, nobs2)
    r = sps.ttest_ind_from_stats(mean1, std1, nobs1, mean2, std2, nobs2, equal_var=False)
    return TestResult(float(r.statistic), float(r.pvalue),
                      float(_welch_df(std1, nobs1, std2, nobs2)))


def student_from_stats(mean1: float, std1: float, nobs1: int, mean2: float, std2: float,
                       nobs2: int) -> TestResult:
    """Two-sample Student t test (pooled variance) from summary statistics, two-sided,
    ``df = n1 + n2 - 2``."""
    _check_n(nobs1, nobs2)
    r = sps.ttest_ind_from_stats(mean1, std1, nobs1, mean2, std2, nobs2, equal_var=True)
    return TestResult(float(r.statistic), float(r.pvalue), float(nobs1 + nobs2 - 2))


@dataclass(frozen=True)
class SummaryBox:
    """One sample's summary statistics as a reader knows them: the intervals its mean and
    sample sd (ddof=1) lie in (e.g. from :func:`rounding_interval`; negative sd bounds
    are clipped to 0) and its size (>= 2)."""

    mean: Interval
    std: Interval
    nobs: int


def ttest_pvalue_range(a: SummaryBox, b: SummaryBox, equal_var: bool = False,
                       grid: int = 401) -> PvalueRange:
    """The range of the two-sided two-sample t test's p over a box of summary statistics.

    Where the extremes lie. The means enter only through D = mean1 - mean2 and p falls
    as |D| grows, so the largest p uses the smallest reachable |D| (0, and p = 1, when
    the mean intervals overlap) and the smallest p the largest |D|. For the sds write
    V = s1^2/n1 + s2^2/n2 (the squared standard error) and r = (s1^2/n1) / V. Then
    |t| = |D| / sqrt(V), and the df depends on r alone: Welch's df = 1 / (r^2/(n1-1) +
    (1-r)^2/(n2-1)), highest at r = (n1-1)/(n1+n2-2); Student's df is fixed. Two-sided p
    rises with V at fixed r, and falls as df rises at fixed |t| (the t tails thin with
    df; checked in the tests). So p is *not* monotone in each sd under Welch - raising
    the smaller sd can raise df faster than it lowers |t| - but along every ray from the
    origin of the (s1, s2) plane (fixed r) p rises with the scale. Hence the maximum lies
    on the box's outer edges (s1 = hi or s2 = hi) and the minimum on its inner edges
    (s1 = lo or s2 = lo). Along an edge both V and r move, and p need not be unimodal, so
    each edge is scanned on a ``grid`` of points and the best point refined by bounded
    Brent search between its neighbours. For Student's test (fixed df) p rises with each
    sd and the extremes are the corners, which the scan includes.

    Parameters
    ----------
    a, b : SummaryBox
        The two samples' mean and sd intervals and sizes.
    equal_var : bool
        Student's pooled test instead of Welch's.
    grid : int
        Points per edge in the scan before refinement.

    Returns
    -------
    PvalueRange
        ``low``/``high`` and the (mean1, sd1, mean2, sd2) attaining each.
    """
    _check_n(a.nobs, b.nobs)
    m1, m2 = _interval(a.mean), _interval(b.mean)
    box = _SdBox(_interval(a.std, floor=0.0), _interval(b.std, floor=0.0), (a.nobs, b.nobs),
                 equal_var)
    (near, near_at), (far, far_at) = _mean_extremes(m1, m2)
    high, (h1, h2) = _edge_search(near, box, grid, outer=True)
    low, (l1, l2) = _edge_search(far, box, grid, outer=False)
    return PvalueRange(low, high, (far_at[0], l1, far_at[1], l2),
                       (near_at[0], h1, near_at[1], h2))


def _mean_extremes(m1: Interval, m2: Interval) -> tuple[tuple[float, tuple[float, float]], ...]:
    """The smallest and the largest reachable |mean1 - mean2|, each with the (mean1,
    mean2) attaining it: ((near, at), (far, at))."""
    (m1lo, m1hi), (m2lo, m2hi) = m1, m2
    dlo, dhi = m1lo - m2hi, m1hi - m2lo
    if dlo <= 0.0 <= dhi:  # the mean intervals overlap: D = 0 is reachable
        common = (max(m1lo, m2lo) + min(m1hi, m2hi)) / 2
        near = (0.0, (common, common))
    elif dlo > 0:
        near = (dlo, (m1lo, m2hi))
    else:
        near = (-dhi, (m1hi, m2lo))
    far = (dhi, (m1hi, m2lo)) if abs(dhi) >= abs(dlo) else (-dlo, (m1lo, m2hi))
    return near, far


def paired_from_dz(dz: float, n: int) -> TestResult:
    """Paired t test recovered from Cohen's d_z = mean(d) / sd(d) over n pairs: t = d_z
    sqrt(n), df = n - 1, two-sided (the paper prints d with p; d_z is the paired d)."""
    if n < 2:
        raise ValueError(f"a paired t test needs n >= 2 pairs, got {n}")
    t = float(dz) * math.sqrt(n)
    return TestResult(t, float(2 * sps.t.sf(abs(t), n - 1)), float(n - 1))


def paired_sd_for_p(mean_diff: float, n: int, pvalue: float) -> float:
    """The sd of the paired differences at which a two-sided paired t test of
    ``mean_diff`` over ``n`` pairs gives ``pvalue`` (what a printed p implies when the
    differences' sd is not printed)."""
    if not 0.0 < pvalue < 1.0:
        raise ValueError(f"p must lie in (0, 1), got {pvalue}")
    if n < 2:
        raise ValueError(f"a paired t test needs n >= 2 pairs, got {n}")
    t = float(sps.t.isf(pvalue / 2, n - 1))
    return abs(float(mean_diff)) * math.sqrt(n) / t


def wilcoxon_sign_pvalues(n_pos: int, n_neg: int) -> dict[int, float]:
    """Exact two-sided Wilcoxon signed-rank p for every rank sum of the negative
    differences that ``n_neg`` negatives among ``n_pos + n_neg`` non-zero differences
    (zeros already dropped, no tied magnitudes) can have: {W-: p}.

    When a paper prints only sign counts, the p it could have printed is one of these.
    """
    if n_pos < 0 or n_neg < 0 or n_pos + n_neg < 1:
        raise ValueError(f"need non-negative sign counts with at least one non-zero "
                         f"difference, got {n_pos} positive and {n_neg} negative")
    n = n_pos + n_neg
    lo, hi = n_neg * (n_neg + 1) // 2, n_neg * (2 * n - n_neg + 1) // 2
    ranks = np.arange(1, n + 1, dtype=np.float64)
    out = {}
    for w in range(lo, hi + 1):
        # Any set of n_neg distinct ranks summing to w: the smallest ranks, the last one
        # raised to close the gap (distinct sums between lo and hi are all reachable).
        neg = _ranks_summing_to(w, n_neg, n)
        d = ranks.copy()
        d[[r - 1 for r in neg]] *= -1
        r = sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="exact")
        out[w] = float(r.pvalue)
    return out


def _ranks_summing_to(w: int, k: int, n: int) -> list[int]:
    """k distinct ranks in 1..n summing to w (greedy from the top)."""
    ranks, left = [], w
    for i in range(k, 0, -1):
        floor = i * (i - 1) // 2  # the least the remaining i-1 ranks can sum to
        r = min(n - (k - i), left - floor)
        if ranks:
            r = min(r, ranks[-1] - 1)
        ranks.append(r)
        left -= r
    if left != 0 or ranks and min(ranks) < 1:
        raise ValueError(f"no {k} distinct ranks in 1..{n} sum to {w}")
    return ranks


def _welch_df(std1, nobs1, std2, nobs2):
    v1, v2 = np.square(std1) / nobs1, np.square(std2) / nobs2
    with np.errstate(divide="ignore", invalid="ignore"):
        return (v1 + v2) ** 2 / (v1**2 / (nobs1 - 1) + v2**2 / (nobs2 - 1))


def _p_at(d: float, s1, s2, n: tuple[int, int], equal_var: bool) -> np.ndarray:
    """Two-sided p at mean difference ``d`` for arrays of sds; sd 0 on both sides gives
    p = 0 (any d != 0 is then certain) or 1 (d = 0)."""
    s1, s2 = np.broadcast_arrays(np.asarray(s1, float), np.asarray(s2, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = sps.ttest_ind_from_stats(d, s1, n[0], 0.0, s2, n[1], equal_var=equal_var).pvalue
    p = np.asarray(p, dtype=np.float64)
    degenerate = (s1 == 0) & (s2 == 0)
    return np.where(degenerate, 1.0 if d == 0 else 0.0, np.where(np.isnan(p), 1.0, p))


@dataclass(frozen=True)
class _SdBox:
    """The sds' box of a t test: each sd's interval, the sample sizes and the test."""

    s1: Interval
    s2: Interval
    n: tuple[int, int]
    equal_var: bool

    def p(self, d: float, s1, s2) -> np.ndarray:
        return _p_at(d, s1, s2, self.n, self.equal_var)


def _edge_search(d: float, box: _SdBox, grid: int,
                 outer: bool) -> tuple[float, tuple[float, float]]:
    """max p over the outer edges (``outer``) or min p over the inner edges of the sd
    box, at mean difference ``d``; returns (p, (sd1, sd2))."""
    s1, s2 = box.s1, box.s2
    if d == 0.0:
        return 1.0, ((s1[0] + s1[1]) / 2, (s2[0] + s2[1]) / 2)
    sign = -1.0 if outer else 1.0  # minimise sign * p
    fixed1, fixed2 = (s1[1], s2[1]) if outer else (s1[0], s2[0])
    best = (math.inf, (0.0, 0.0))
    for free_is_2 in (True, False):
        lo, hi = s2 if free_is_2 else s1
        xs = np.linspace(lo, hi, grid) if hi > lo else np.array([lo])

        def at(x, free_is_2=free_is_2):
            return (fixed1, x) if free_is_2 else (x, fixed2)

        vals = sign * box.p(d, *np.broadcast_arrays(*at(xs)))
        i = int(np.argmin(vals))
        x, v = float(xs[i]), float(vals[i])
        if xs.size > 2:
            a, b = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
            r = optimize.minimize_scalar(
                lambda z, at=at: sign * float(box.p(d, *at(z))),
                bounds=(float(a), float(b)), method="bounded",
                options={"xatol": 1e-12 * max(1.0, abs(hi))})
            if r.fun < v:
                x, v = float(r.x), float(r.fun)
        if v < best[0]:
            best = (v, at(x))
    return sign * best[0], (float(best[1][0]), float(best[1][1]))


def _interval(iv: Interval, floor: float | None = None) -> Interval:
    lo, hi = float(iv[0]), float(iv[1])
    if not lo <= hi:
        raise ValueError(f"interval must have lo <= hi, got {iv}")
    if floor is not None:
        if hi < floor:
            raise ValueError(f"a standard deviation interval must reach >= {floor}, got {iv}")
        lo = max(lo, floor)
    return lo, hi


def _check_n(*nobs: int) -> None:
    for n in nobs:
        if int(n) != n or n < 2:
            raise ValueError(f"each sample needs n >= 2 observations, got {n}")
