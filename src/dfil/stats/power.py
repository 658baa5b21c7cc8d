"""Power, minimum detectable effect and seeds needed for the claims' declared tests (pure:
scipy, statsmodels).

One function computes the power of each declared test (:func:`power`); the minimum
detectable effect (:func:`mde`) and the seeds a side for a target power
(:func:`n_for_power`) solve that same function, so that a plan, a claim's power at the
seeds that ran and its MDE always describe the test its verdict runs.

The tests (:class:`Trial`), as :mod:`dfil.claims.evidence` runs them:

- a directional claim: a two-sided t-test at level alpha, counted only when the estimate
  has the claimed sign. Its power is the one-sided power at alpha / 2 (the other tail's
  rejections are the opposite verdict). Paired and one-sample tests: statsmodels'
  ``TTestPower`` on Cohen's d_z (the effect over the differences' sd); Welch's test:
  ``TTestIndPower`` on Cohen's d (the effect over the sd both sides share) with
  ``ratio = n_b / n_a``, whose Student df stands in for Welch's (equal with equal sides
  and sds).
- a parity: two one-sided tests (TOST) at level alpha with margin m. Its power is exact
  for the t statistics (Owen's integral, by quadrature over the chi distribution of the
  sample sd): equivalence is shown when the estimate lies within ±(m - t_crit * se_hat).

Method: Cohen, *Statistical Power Analysis for the Behavioral Sciences* (1988), ch. 2;
Schuirmann (1987) and Owen (1965) for TOST.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import integrate, optimize
from scipy import stats as sps
from statsmodels.stats.power import TTestIndPower, TTestPower

#: How a claim's test may compare its seeds.
DESIGNS = ("paired", "one-sample", "welch")
#: A t-test needs two values a side.
MIN_N = 2


@dataclass(frozen=True)
class Trial:
    """One declared test: how it compares seeds (:data:`DESIGNS`), the ``sd`` its
    standardised effect divides by (the differences' sd for a paired or one-sample test; the sd both
    sides share for Welch's), the TOST ``margin`` of a parity (None: a directional test),
    and ``ratio`` = n_b / n_a (Welch's only)."""

    design: str
    sd: float
    margin: float | None = None
    ratio: float = 1.0

    def __post_init__(self):
        if self.design not in DESIGNS:
            raise ValueError(f"design must be one of {DESIGNS}, got {self.design!r}")
        if not self.sd >= 0 or math.isinf(self.sd):
            raise ValueError(f"sd must be finite and >= 0, got {self.sd}")
        if self.margin is not None and not self.margin > 0:
            raise ValueError(f"a parity's margin must be positive, got {self.margin}")
        if not self.ratio > 0:
            raise ValueError(f"ratio n_b / n_a must be positive, got {self.ratio}")

    @property
    def parity(self) -> bool:
        return self.margin is not None


def _check(n: float, alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if n < MIN_N:
        raise ValueError(f"a t-test needs n >= {MIN_N} a side, got {n}")


def _se_df(trial: Trial, n: float) -> tuple[float, float]:
    """The standard error of the estimate in units of ``trial.sd``, and its df."""
    if trial.design == "welch":
        n_b = trial.ratio * n
        return math.sqrt(1 / n + 1 / n_b), n + n_b - 2
    return 1 / math.sqrt(n), n - 1


def power(trial: Trial, effect: float, n: float, alpha: float) -> float:
    """The probability that ``trial``'s test, at level ``alpha`` with ``n`` seeds (side a;
    side b has ``ratio * n``), reaches its claim when the true difference is ``effect``:
    for a directional test, p < alpha with the estimate's sign that of ``effect``; for a
    parity, TOST's p < alpha within ±margin."""
    _check(n, alpha)
    if trial.parity:
        return _tost_power(trial, effect, n, alpha)
    if effect == 0:
        return alpha / 2
    if trial.sd == 0:
        return 1.0
    d = abs(effect) / trial.sd
    if trial.design == "welch":
        p = TTestIndPower().power(d, nobs1=n, alpha=alpha / 2, ratio=trial.ratio,
                                  alternative="larger")
    else:
        p = TTestPower().power(d, nobs=n, alpha=alpha / 2, alternative="larger")
    p = float(p)
    # statsmodels' noncentral t gives nan where the power is 1 to machine precision
    return 1.0 if math.isnan(p) else p


def _tost_power(trial: Trial, effect: float, n: float, alpha: float) -> float:
    """TOST's exact power: with se = sd * k and the sample sd s = sd * sqrt(q / df),
    q ~ chi2(df), equivalence is shown when |estimate| < m - t_crit * k * s; integrate
    the normal probability of that interval over q."""
    m, sd = trial.margin, trial.sd
    k, df = _se_df(trial, n)
    if sd == 0:
        return 1.0 if abs(effect) < m else 0.0
    se, crit = sd * k, float(sps.t.ppf(1 - alpha, df))
    # beyond q_max the interval is empty; outside the chi2's central 1 - 2e-12 the
    # integrand is negligible (bounding the range keeps quadrature on its peak)
    q_lo = float(sps.chi2.ppf(1e-12, df))
    q_max = min(df * (m / (crit * se)) ** 2, float(sps.chi2.isf(1e-12, df)))
    if q_max <= q_lo:
        return 0.0

    def inside(q: float) -> float:
        half = m - crit * se * math.sqrt(q / df)
        return float(sps.norm.cdf((half - effect) / se) - sps.norm.cdf((-half - effect) / se)
                     ) * float(sps.chi2.pdf(q, df))

    value = integrate.quad(inside, q_lo, q_max, limit=200)[0]
    return min(1.0, max(0.0, value))


def mde(trial: Trial, n: float, alpha: float, target: float = 0.8) -> float | None:
    """The smallest difference :func:`power` finds with probability ``target``: for a
    directional test, the smallest |effect|; for a parity, the smallest margin within
    which TOST shows equivalence of a true difference 0 (``trial.margin`` is ignored).
    None where no finite one exists (an sd of 0 makes it 0)."""
    _check(n, alpha)
    if not 0 < target < 1:
        raise ValueError(f"target power must lie in (0, 1), got {target}")
    if trial.sd == 0:
        return 0.0
    if trial.parity:
        def gap(m: float) -> float:
            return power(Trial(trial.design, trial.sd, m, trial.ratio), 0.0, n, alpha) - target
    else:
        def gap(e: float) -> float:
            return power(trial, e, n, alpha) - target
    hi = trial.sd
    while gap(hi) < 0:
        hi *= 2
        if hi > 1e6 * trial.sd:
            return None
    return float(optimize.brentq(gap, 0.0 if not trial.parity else 1e-12 * trial.sd, hi,
                                 xtol=1e-10 * trial.sd))


def n_for_power(trial: Trial, effect: float, alpha: float, target: float = 0.8,
                most: int = 4000) -> int | None:
    """The least n (side a's seeds, from :data:`MIN_N`) at which :func:`power` reaches
    ``target``, or None beyond ``most`` (or never: a zero effect, a parity whose
    difference is not within its margin). Power rises with n, so a bisection finds it."""
    if not 0 < target < 1:
        raise ValueError(f"target power must lie in (0, 1), got {target}")
    if trial.parity and abs(effect) >= trial.margin:
        return None
    if not trial.parity and effect == 0:
        return None
    lo, hi = MIN_N, most
    if power(trial, effect, hi, alpha) < target:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if power(trial, effect, mid, alpha) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo
