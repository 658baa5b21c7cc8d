"""Seeds per side that give a claim's declared test a stated power (pure: numpy, scipy,
statsmodels).

The effect and spread are the paper's own: the printed difference, and each side's
printed sample std. Where a closed form applies it is used: Welch's test through
statsmodels' ``TTestIndPower`` (Cohen's d on the root mean square of the two stds, equal
n a side: with equal n Welch's t statistic is Student's, only its df differs), a paired
test through ``TTestPower`` on the differences (their std sqrt(s_a^2 + s_b^2), i.e. zero
correlation between the sides, unless the paper printed the differences' own std), and
a one-sample test through ``TTestPower``. TOST, which has no such form here, is simulated:
normal samples with the paper's means and stds, tested by :func:`dfil.stats.tost`
itself, from a fixed seed (:func:`simulated_power` runs any of the tests this way; a test
checks both routes agree). Method: Cohen, *Statistical Power Analysis for the Behavioral
Sciences* (1988), ch. 2; for seeds in ML, Colas et al., "How Many Random Seeds?" (2018).

A claim whose spread the paper does not print is planned at :data:`UNKNOWN_SEEDS` seeds;
one that needs more than :data:`MAX_SEEDS` is not plannable at any budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from statsmodels.stats.power import TTestIndPower, TTestPower

from dfil import stats

#: The most seeds a side the planner will ask for: twice the paper's largest seed set
#: (21); beyond it, run-to-run noise swamps the claimed effect for any budget of this grid.
MAX_SEEDS = 40
#: A t-test needs two values a side.
MIN_SEEDS = 2
#: Seeds a side for a claim whose spread the paper does not print (the paper's default).
UNKNOWN_SEEDS = 3
#: Draws per power estimate of a simulated test.
SIMS = 2000


@dataclass(frozen=True)
class Need:
    """Seeds a side a claim needs: ``seeds`` (None: more than ``MAX_SEEDS``, see
    ``beyond``), how that was found (``analytic``, ``simulated``, ``spread unknown``), and
    the power reached at ``seeds``."""

    seeds: int | None
    method: str
    power: float | None = None
    beyond: int | None = None
    """Where ``seeds`` is None: the seeds it would need, where a closed form finds them."""

    @property
    def message(self) -> str:
        if self.seeds is not None:
            return f"{self.seeds}"
        n = f"{self.beyond}" if self.beyond else f"more than {MAX_SEEDS}"
        return f"needs {n} seeds a side: not plannable"


@dataclass(frozen=True)
class Trial:
    """What a power analysis of one claim needs: its ``test``, the true ``effect`` (side
    a minus side b), each side's std ``sds``, and TOST's ``margin``."""

    test: str
    effect: float
    sds: tuple[float, ...]
    margin: float = 0.0


def effect_sd(sds: tuple[float, ...], test: str) -> float:
    """The std a one- or two-sample power analysis divides the effect by."""
    if test == "welch":
        return math.sqrt(sum(s * s for s in sds) / len(sds))  # root mean square: Cohen's d
    if test == "paired":
        return math.sqrt(sum(s * s for s in sds))  # the differences' std, no correlation
    return sds[0]


def analytic_power(trial: Trial, n: int, alpha: float) -> float | None:
    """Power of the trial's test at ``n`` seeds a side from statsmodels (two-sided, at
    level ``alpha``); None for a test with no closed form here (TOST)."""
    test, effect, sds = trial.test, trial.effect, trial.sds
    if test not in ("welch", "paired", "one_sample"):
        return None
    sd = effect_sd(sds, test)
    if sd == 0:
        return 1.0 if effect else alpha
    d = abs(effect) / sd
    if test == "welch":
        p = float(TTestIndPower().power(d, nobs1=n, alpha=alpha, ratio=1.0))
    else:
        p = float(TTestPower().power(d, nobs=n, alpha=alpha))
    # statsmodels' noncentral t gives nan where the power is 1 to machine precision
    return 1.0 if math.isnan(p) else p


def simulated_power(trial: Trial, n: int, alpha: float, sims: int = SIMS,
                    seed: int = 0) -> float:
    """Power of the trial's test at ``n`` seeds a side, by simulation: ``sims`` pairs of
    normal samples (side a around the effect with std ``sds[0]``, side b around 0 with
    ``sds[-1]``; a one-sample test uses side a only) tested by :mod:`dfil.stats`, drawn
    from ``seed``. A superiority test counts a rejection in the effect's direction; TOST,
    equivalence within the margin."""
    test, effect, sds, margin = trial.test, trial.effect, trial.sds, trial.margin
    rng = np.random.default_rng(seed)
    a = rng.normal(effect, sds[0], size=(sims, n))
    b = rng.normal(0.0, sds[-1], size=(sims, n))
    hits = 0
    for x, y in zip(a, b, strict=True):
        if test == "tost":
            hits += stats.tost(x, y, margin).pvalue < alpha
            continue
        r = (stats.welch(x, y) if test == "welch" else stats.paired_t(x, y)
             if test == "paired" else _one_sample(x))
        hits += r.pvalue < alpha and np.sign(r.statistic) == np.sign(effect)
    return hits / sims


def _one_sample(x: np.ndarray) -> stats.TestResult:
    return stats.paired_t(x, np.zeros_like(x))


def _power(trial: Trial, n: int, alpha: float) -> float:
    p = analytic_power(trial, n, alpha)
    return simulated_power(trial, n, alpha, seed=n) if p is None else p


def _smallest(trial: Trial, alpha: float, power: float, lo: int, hi: int) -> int | None:
    """The smallest n in [lo, hi] with power >= ``power`` (power rises with n), else
    None."""
    if _power(trial, hi, alpha) < power:
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _power(trial, mid, alpha) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def seeds_needed(test: str, effect: float, sds: tuple[float | None, ...], alpha: float = 0.05,
                 power: float = 0.8, margin: float = 0.0) -> Need:
    """Seeds a side for ``test`` to detect the paper's ``effect`` (for TOST: to establish
    equivalence within ``margin`` when the true difference is ``effect``) with
    probability ``power`` at level ``alpha``, given each side's printed std ``sds`` (None:
    not printed)."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    if any(s is None for s in sds):
        return Need(UNKNOWN_SEEDS, "spread unknown")
    how = "simulated" if test == "tost" else "analytic"
    if not any(sds) and (abs(effect) < margin if test == "tost" else effect != 0):
        return Need(MIN_SEEDS, how, 1.0)  # no spread at all: two seeds show it exactly
    if test == "tost" and abs(effect) >= margin:
        return Need(None, how)  # equivalence cannot be shown for a difference past the margin
    if test != "tost" and effect == 0:
        return Need(None, how)
    trial = Trial(test, effect, tuple(sds), margin)
    n = _smallest(trial, alpha, power, MIN_SEEDS, MAX_SEEDS)
    if n is not None:
        return Need(n, how, _power(trial, n, alpha))
    beyond = None if test == "tost" else _smallest(trial, alpha, power, MAX_SEEDS + 1,
                                                   100 * MAX_SEEDS)
    return Need(None, how, beyond=beyond)
