"""dfil.claims.evidence: the declared tests on seeds, checked against hand-computed values."""

import math

import numpy as np
import pytest
from claim_tables import DFIL, FT, stat, two_rows
from scipy import stats as sps

from dfil import stats
from dfil.claims import declare
from dfil.claims.evidence import claim_p, evaluate, pooled_sd


def test_a_direction_is_one_two_sided_welch_p_by_hand():
    # a = 44, 45, 46 (var 1), b = 40, 40.5, 41 (var 0.25): se = sqrt(1/3 + 0.25/3),
    # t = 4.5 / se = 6.971, Welch df = (5/12)^2 / ((1/3)^2/2 + (1/12)^2/2) = 2.941;
    # one-sided 0.0032288, so two-sided 0.0064576
    x, y = np.array([44.0, 45, 46]), np.array([40.0, 40.5, 41])
    assert claim_p(x, y, 4.5, None) == pytest.approx(0.0064576, rel=1e-4)
    assert claim_p(y, x, -4.5, None) == pytest.approx(0.0064576, rel=1e-4)


def test_a_parity_is_tost_within_its_margin_and_beyond_it_a_doubled_one_sided_p():
    # mean difference 0, se = sqrt(0.04/3 + 0.01/3) = 0.1291: t = ±0.5 / se = ±3.873 on
    # df 2.941; TOST's p is the larger one-sided p, t.sf(3.873, 2.941)
    x, y = np.array([1.0, 1.2, 0.8]), np.array([1.1, 0.9, 1.0])
    assert claim_p(x, y, 0.0, 0.5) == pytest.approx(0.0157811, rel=1e-4)
    assert stats.tost(x, y, 0.5).pvalue == pytest.approx(0.0157811, rel=1e-4)
    # estimate 4.5 beyond a margin of 1: twice Welch's one-sided p of a - b - 1 > 0
    a, b = np.array([44.0, 45, 46]), np.array([40.0, 40.5, 41])
    one = sps.ttest_ind(a - 1.0, b, equal_var=False, alternative="greater").pvalue
    assert claim_p(a, b, 4.5, 1.0) == pytest.approx(2 * one)
    # per-seed differences (one sample): TOST within ±1 by one-sample t
    d = np.array([0.1, -0.2, 0.3, 0.0])
    lower = sps.ttest_1samp(d + 1.0, 0.0, alternative="greater").pvalue
    upper = sps.ttest_1samp(d - 1.0, 0.0, alternative="less").pvalue
    assert claim_p(d, None, 0.05, 1.0) == pytest.approx(max(lower, upper))


def test_pooled_sd_by_hand():
    assert pooled_sd(np.array([1.0, 3.0]), np.array([2.0, 2.0, 5.0])) == pytest.approx(
        math.sqrt((2 + 6) / 3))


def test_a_difference_is_paired_when_both_sides_run_on_the_same_seeds():
    a = stat(44.0, 45.0, 47.0, cell=DFIL)
    b = stat(40.0, 40.5, 41.0, cell=FT)
    [d] = declare(two_rows(a, b, 45.0, 40.0))
    assert (d.test, d.sign, d.design) == ("superiority", 1, "paired")
    ev = evaluate(d)
    diffs = [4.0, 4.5, 6.0]
    assert ev.p == pytest.approx(sps.ttest_1samp(diffs, 0).pvalue)
    assert ev.estimate == pytest.approx(np.mean(diffs)) and ev.n_a == 3 and ev.n_b is None
    # its power and MDE are the paired test's, on the differences' sd
    assert ev.trial == stats.Trial("paired", float(np.std(diffs, ddof=1)))
    # other seeds on one side: Welch
    [w] = declare(two_rows(a, stat(40.0, 40.5, 41.0, cell=FT, seeds=(4, 5, 6)), 45.0, 40.0))
    assert w.design == "welch"
    assert evaluate(w).p == pytest.approx(sps.ttest_ind(
        [44, 45, 47], [40, 40.5, 41], equal_var=False).pvalue)
    assert evaluate(w).trial == stats.Trial("welch", pooled_sd(np.array([44.0, 45, 47]),
                                                               np.array([40, 40.5, 41])))


def test_a_parity_is_declared_from_the_paper_value_and_tested_by_tost():
    a, b = stat(1.0, 1.2, 0.8, cell=DFIL), stat(1.1, 0.9, 1.0, cell=FT, seeds=(4, 5, 6))
    [d] = declare(two_rows(a, b, 40.1, 40.0))  # the paper's Δ 0.1 < tol 0.5
    assert (d.test, d.sign) == ("parity", 0)
    assert evaluate(d).p == pytest.approx(0.0157811, rel=1e-4)
    assert evaluate(d).margin == 0.5 and evaluate(d).trial.margin == 0.5
    assert "TOST" in evaluate(d).test and "±0.5" in evaluate(d).test


def test_zero_variance_is_degenerate_and_one_seed_has_no_test():
    [d] = declare(two_rows(stat(3.0, 3.0, cell=DFIL), stat(1.0, 1.0, cell=FT, seeds=(7, 8)),
                           45.0, 40.0))
    ev = evaluate(d)
    assert ev.degenerate.startswith("degenerate") and ev.p is None and ev.trial is None
    [one] = declare(two_rows(stat(3.0, cell=DFIL), stat(1.0, 2.0, cell=FT), 45.0, 40.0))
    assert evaluate(one).p is None and evaluate(one).trial is None
    [none] = declare(two_rows(stat(cell=DFIL), stat(1.0, 2.0, cell=FT), 45.0, 40.0))
    assert evaluate(none) is None


def test_a_paritys_margin_is_the_papers_own_seed_sd_at_least_tol():
    # the paper prints 40.1±1.5 and 40.0±2.0: margin sqrt((1.5² + 2.0²) / 2) = 1.768
    a = stat(40.0, 41.0, 39.5, cell=DFIL, published="40.1±1.5")
    b = stat(40.5, 39.0, 40.2, cell=FT, seeds=(4, 5, 6), published="40.0±2.0")
    [d] = declare(two_rows(a, b, 40.1, 40.0))
    assert d.test == "parity" and d.margin == pytest.approx(math.sqrt((2.25 + 4.0) / 2))
    ev = evaluate(d)
    assert ev.margin == ev.trial.margin == d.margin and "±1.77" in ev.test
    x, y = np.array([40.0, 41.0, 39.5]), np.array([40.5, 39.0, 40.2])
    assert ev.p == pytest.approx(stats.tost(x, y, d.margin).pvalue)
    # no printed std, or a spread below tol: the margin is tol
    [bare] = declare(two_rows(stat(1.0, 1.2, 0.8, cell=DFIL), stat(1.1, 0.9, 1.0, cell=FT),
                              40.1, 40.0))
    assert bare.margin == 0.5
    tight = stat(1.0, 1.2, 0.8, cell=DFIL, published="40.1±0.1")
    [small] = declare(two_rows(tight, stat(1.1, 0.9, cell=FT, published="40.0±0.2"),
                               40.1, 40.0))
    assert small.margin == 0.5
