"""dfil.claims.evidence: the declared tests on seeds, checked against hand-computed values."""

import math

import numpy as np
import pytest
from claim_tables import DFIL, FT, stat, two_rows
from scipy import stats as sps

from dfil.claims import declare
from dfil.claims.evidence import evaluate, mde_one, mde_two, pooled_sd, shifted, tost


def test_one_sided_welch_by_hand():
    # a = 44, 45, 46 (var 1), b = 40, 40.5, 41 (var 0.25): se = sqrt(1/3 + 0.25/3),
    # t = 4.5 / se = 6.971, Welch df = (5/12)^2 / ((1/3)^2/2 + (1/12)^2/2) = 2.941
    p = shifted(np.array([44.0, 45, 46]), np.array([40.0, 40.5, 41]), 0.0, "greater")
    assert p == pytest.approx(0.0032288, rel=1e-4)
    assert shifted(np.array([44.0, 45, 46]), np.array([40.0, 40.5, 41]), 0.0, "less") == \
        pytest.approx(1 - 0.0032288, rel=1e-6)


def test_tost_by_hand():
    # mean difference 0, se = sqrt(0.04/3 + 0.01/3) = 0.1291: t = ±0.5 / se = ±3.873 on
    # df 2.941; TOST's p is the larger one-sided p, t.sf(3.873, 2.941)
    x, y = np.array([1.0, 1.2, 0.8]), np.array([1.1, 0.9, 1.0])
    assert tost(x, y, 0.5) == pytest.approx(0.0157811, rel=1e-4)
    assert tost(x, y, 0.05) > 0.3  # a margin the spread cannot establish


def test_mde_at_a_known_n_and_sd():
    # the effect a one-sided one-sample t-test at n = 10 finds with power 0.8: the
    # noncentral t's tail past the critical t is 0.8 there
    mde = mde_one(10, 2.0)
    crit = sps.t.ppf(0.95, 9)
    assert sps.nct.sf(crit, 9, mde / 2.0 * math.sqrt(10)) == pytest.approx(0.8, abs=1e-5)
    assert mde == pytest.approx(1.7057, abs=1e-3)
    # two samples of 5, pooled sd 1: noncentrality d * sqrt(5 * 5 / 10), df 8
    two = mde_two(5, 5, 1.0)
    assert sps.nct.sf(sps.t.ppf(0.95, 8), 8, two * math.sqrt(2.5)) == pytest.approx(0.8,
                                                                                   abs=1e-5)
    assert pooled_sd(np.array([1.0, 3.0]), np.array([2.0, 2.0, 5.0])) == pytest.approx(
        math.sqrt((2 + 6) / 3))


def test_a_difference_is_paired_when_both_sides_run_on_the_same_seeds():
    a = stat(44.0, 45.0, 47.0, cell=DFIL)
    b = stat(40.0, 40.5, 41.0, cell=FT)
    [d] = declare(two_rows(a, b, 45.0, 40.0))
    assert (d.test, d.sign, d.design) == ("superiority", 1, "paired")
    ev = evaluate(d)
    diffs = [4.0, 4.5, 6.0]
    assert ev.p_for == pytest.approx(sps.ttest_1samp(diffs, 0, alternative="greater").pvalue)
    assert ev.estimate == pytest.approx(np.mean(diffs)) and ev.n_a == 3 and ev.n_b is None
    # other seeds on one side: Welch
    [w] = declare(two_rows(a, stat(40.0, 40.5, 41.0, cell=FT, seeds=(4, 5, 6)), 45.0, 40.0))
    assert w.design == "welch"
    assert evaluate(w).p_for == pytest.approx(sps.ttest_ind(
        [44, 45, 47], [40, 40.5, 41], equal_var=False, alternative="greater").pvalue)


def test_a_parity_is_declared_from_the_paper_value_and_tested_by_tost():
    a, b = stat(1.0, 1.2, 0.8, cell=DFIL), stat(1.1, 0.9, 1.0, cell=FT, seeds=(4, 5, 6))
    [d] = declare(two_rows(a, b, 40.1, 40.0))  # the paper's Δ 0.1 < tol 0.5
    assert (d.test, d.sign) == ("parity", 0)
    assert evaluate(d).p_for == pytest.approx(0.0157811, rel=1e-4)
    assert "TOST" in evaluate(d).test and "±0.5" in evaluate(d).test


def test_zero_variance_is_degenerate_and_one_seed_has_no_test():
    [d] = declare(two_rows(stat(3.0, 3.0, cell=DFIL), stat(1.0, 1.0, cell=FT, seeds=(7, 8)),
                           45.0, 40.0))
    ev = evaluate(d)
    assert ev.degenerate.startswith("degenerate") and ev.p_for == 0.0
    [one] = declare(two_rows(stat(3.0, cell=DFIL), stat(1.0, 2.0, cell=FT), 45.0, 40.0))
    assert evaluate(one).p_for is None and evaluate(one).mde is None
    [none] = declare(two_rows(stat(cell=DFIL), stat(1.0, 2.0, cell=FT), 45.0, 40.0))
    assert evaluate(none) is None
