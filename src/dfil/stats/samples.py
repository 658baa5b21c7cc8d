"""The paper's statistical tests on per-seed samples (pure: numpy, scipy, statsmodels).

Each test returns a small frozen dataclass. Nothing is re-derived that scipy or
statsmodels already computes; the functions only fix the paper's conventions: sample std
with ddof=1, two-sided tests unless stated, Wilcoxon zero differences dropped ("ties",
App. F.2; scipy's ``zero_method="wilcox"``), Cohen's d_z for paired designs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_ind, ttost_paired


@dataclass(frozen=True)
class Described:
    mean: float
    std: float
    n: int


@dataclass(frozen=True)
class TestResult:
    """A test statistic, its p-value, and the degrees of freedom where there are any."""

    statistic: float
    pvalue: float
    df: float | None = None


@dataclass(frozen=True)
class Tost:
    """Two one-sided tests: equivalent at level a when ``pvalue`` < a."""

    pvalue: float
    lower: TestResult
    upper: TestResult
    margin: float


def _arr(x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if a.size == 0:
        raise ValueError("empty sample")
    return a


def describe(x) -> Described:
    """Mean, sample std (ddof=1; 0.0 for a single value) and n."""
    a = _arr(x)
    return Described(float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0, a.size)


def welch(a, b) -> TestResult:
    """Welch's unequal-variance t test, two-sided (Table scaling's parity p-values)."""
    x, y = _arr(a), _arr(b)
    r = sps.ttest_ind(x, y, equal_var=False)
    return TestResult(float(r.statistic), float(r.pvalue), float(r.df))


def paired_t(a, b) -> TestResult:
    """Paired t test on a - b, two-sided (compositional n=20, CSMC n=21)."""
    x, y = _paired(a, b)
    r = sps.ttest_rel(x, y)
    return TestResult(float(r.statistic), float(r.pvalue), float(r.df))


def wilcoxon(a, b) -> TestResult:
    """Wilcoxon signed-rank test on a - b, two-sided; zero differences are dropped
    (Wilcox's method), which is what the paper calls treating them as ties."""
    x, y = _paired(a, b)
    r = sps.wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
    return TestResult(float(r.statistic), float(r.pvalue))


def cohens_dz(a, b) -> float:
    """Cohen's d_z = mean(a - b) / std(a - b, ddof=1) for paired samples."""
    x, y = _paired(a, b)
    d = x - y
    return float(d.mean() / d.std(ddof=1))


def binomial(k: int, n: int, alternative: str = "greater", p: float = 0.5) -> TestResult:
    """Exact binomial test of k successes in n (sign counts: 7/8 -> 0.035 one-sided)."""
    r = sps.binomtest(int(k), int(n), p, alternative=alternative)
    return TestResult(float(k), float(r.pvalue))


def tost(a, b, margin: float) -> Tost:
    """Equivalence of two independent means within +-margin, unequal variances (Welch);
    ``b`` None: of the mean of ``a`` (per-seed differences) and 0, by one-sample t."""
    if margin <= 0:
        raise ValueError(f"TOST margin must be positive, got {margin}")
    x = _arr(a)
    if b is None:
        p, lower, upper = ttost_paired(x, np.zeros_like(x), -margin, margin)
    else:
        p, lower, upper = ttost_ind(x, _arr(b), -margin, margin, usevar="unequal")
    return Tost(float(p), TestResult(float(lower[0]), float(lower[1]), float(lower[2])),
                TestResult(float(upper[0]), float(upper[1]), float(upper[2])), float(margin))


def shifted_t(a, b=None, shift: float = 0.0, alternative: str = "two-sided") -> TestResult:
    """Welch's t test that mean(a) - mean(b) differs from ``shift`` (``b`` None: the
    one-sample t test of mean(a), e.g. per-seed differences), two-sided or one-sided
    (``alternative`` ``"greater"`` or ``"less"``, scipy's words)."""
    x = _arr(a) - shift
    r = (sps.ttest_1samp(x, 0.0, alternative=alternative) if b is None
         else sps.ttest_ind(x, _arr(b), equal_var=False, alternative=alternative))
    return TestResult(float(r.statistic), float(r.pvalue), float(r.df))


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    x, y = _arr(a), _arr(b)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    return x, y
