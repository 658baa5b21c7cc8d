"""dfil.stats.power and dfil.stats.multiplicity: the declared tests' power, MDE and seeds
needed from one function, checked against statsmodels and Cohen's tables by hand, TOST's
exact power against a seeded simulation of dfil.stats.tost itself; Holm against
multipletests and the Bonferroni bound."""

import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

from dfil import stats
from dfil.stats import Trial


def test_directional_power_is_one_sided_at_half_alpha():
    # the verdict's two-sided test counted in the effect's direction: d_z 0.63 at n = 20
    paired = stats.power(Trial("paired", 2.0), 1.26, 20, 0.05)
    assert paired == pytest.approx(TTestPower().power(0.63, 20, 0.025, alternative="larger"))
    assert paired == pytest.approx(0.7620, abs=1e-4)
    # Welch's design: Cohen's d on the shared sd, side b with twice side a's seeds
    welch = stats.power(Trial("welch", 1.5, ratio=2.0), 1.2, 10, 0.01)
    assert welch == pytest.approx(TTestIndPower().power(0.8, 10, 0.005, ratio=2.0,
                                                       alternative="larger"))
    # no effect: the claimed side's tail only; no spread: certain
    assert stats.power(Trial("one-sample", 1.0), 0.0, 5, 0.05) == pytest.approx(0.025)
    assert stats.power(Trial("paired", 0.0), 0.3, 3, 0.05) == 1.0


@pytest.mark.parametrize(("trial", "effect", "n"), [
    # Cohen (1988) Table 2.4.1: d = 0.8, two-sided alpha 0.05, power 0.8 -> 26 a group
    (Trial("welch", 1.0), 0.8, 26),
    # d_z = 0.5, two-sided 0.05: 33.4 by TTestPower -> 34
    (Trial("one-sample", 1.0), 0.5, 34),
    (Trial("paired", 2.0), 1.0, 34),
])
def test_seeds_for_a_power_match_cohens_tables(trial, effect, n):
    assert stats.n_for_power(trial, effect, 0.05, 0.8) == n
    assert stats.power(trial, effect, n, 0.05) >= 0.8 > stats.power(trial, effect, n - 1, 0.05)


def test_mde_solves_the_same_function():
    trial = Trial("paired", 2.0)
    m = stats.mde(trial, 10, 0.05)
    assert stats.power(trial, m, 10, 0.05) == pytest.approx(0.8, abs=1e-8)
    # by hand: TTestPower's effect size at n = 10, one-sided 0.025, power 0.8, times sd 2
    by_hand = TTestPower().solve_power(None, nobs=10, alpha=0.025, power=0.8,
                                       alternative="larger") * 2.0
    assert m == pytest.approx(by_hand, rel=1e-6)
    crit = sps.t.ppf(0.975, 9)
    assert sps.nct.sf(crit, 9, m / 2.0 * math.sqrt(10)) == pytest.approx(0.8, abs=1e-6)
    assert stats.mde(Trial("welch", 0.0), 5, 0.05) == 0.0


def _simulated_tost(trial, effect, n, alpha, sims=3000, seed=0):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        if trial.design == "welch":
            x, y = rng.normal(effect, trial.sd, n), rng.normal(0.0, trial.sd, n)
        else:
            x, y = rng.normal(effect, trial.sd, n), None
        hits += stats.tost(x, y, trial.margin).pvalue < alpha
    return hits / sims


@pytest.mark.parametrize(("trial", "effect", "n"), [
    (Trial("paired", 1.0, margin=0.5), 0.1, 40),
    (Trial("one-sample", 1.0, margin=0.5), 0.0, 15),
    (Trial("welch", 1.0, margin=0.8), 0.1, 30),
    (Trial("welch", 1.0, margin=0.8), 0.3, 12),
])
def test_tost_power_is_exact_for_its_t_statistics(trial, effect, n):
    exact = stats.power(trial, effect, n, 0.05)
    simulated = _simulated_tost(trial, effect, n, 0.05)
    # 3000 draws: a standard error of at most 0.009; Welch's df are below Student's
    assert abs(exact - simulated) < 0.03, (exact, simulated)


def test_tost_seeds_and_its_smallest_margin():
    trial = Trial("welch", 1.8, margin=0.5)
    n = stats.n_for_power(trial, 0.0, 0.05, 0.8)
    # a ±0.5 margin against an sd of 1.8: two hundred-odd seeds a side
    assert 200 < n < 260
    assert stats.power(trial, 0.0, n, 0.05) >= 0.8 > stats.power(trial, 0.0, n - 1, 0.05)
    # past its margin equivalence is never shown
    assert stats.n_for_power(trial, 0.6, 0.05, 0.8) is None
    # the smallest margin TOST shows at n = 10 for a true difference 0
    m = stats.mde(Trial("paired", 1.0, margin=1.0), 10, 0.05)
    assert stats.power(Trial("paired", 1.0, margin=m), 0.0, 10, 0.05) == pytest.approx(0.8)


def test_bad_trials_are_refused():
    with pytest.raises(ValueError, match="design"):
        Trial("student", 1.0)
    with pytest.raises(ValueError, match="margin"):
        Trial("paired", 1.0, margin=0.0)
    with pytest.raises(ValueError, match="n >= 2"):
        stats.power(Trial("paired", 1.0), 1.0, 1, 0.05)
    with pytest.raises(ValueError, match="alpha"):
        stats.power(Trial("paired", 1.0), 1.0, 5, 1.5)


def test_holm_is_multipletests_and_the_bonferroni_level_bounds_it():
    # sorted 0.01, 0.03, 0.04: 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.2, None]) == [pytest.approx(0.2), None]
    ps = [0.001, 0.2, 0.012, 0.04, 0.013]
    assert stats.holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]))
    # a p below alpha / m is rejected by Holm whatever the others are
    assert stats.family_alpha(0.05, 5) == pytest.approx(0.01)
    assert all(h <= 5 * p for p, h in zip(ps, stats.holm(ps), strict=True))
    assert stats.family_alpha(0.05, 0) == 0.05
    out = stats.holm_by_family([0.01, 0.04, 0.03, 0.02], ["primary", "exploratory",
                                                          "primary", "exploratory"])
    assert out == pytest.approx([0.02, 0.04, 0.03, 0.04])
