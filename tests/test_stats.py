import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_ind

from dfil import stats
from dfil.stats import SummaryBox as Box


@pytest.fixture
def samples():
    rng = np.random.default_rng(0)
    return rng.normal(50, 2, 6), rng.normal(49, 3, 6)


def test_describe_uses_sample_std():
    d = stats.describe([1.0, 2.0, 3.0, 4.0])
    assert d.mean == 2.5 and d.n == 4
    assert d.std == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert stats.describe([7.0]).std == 0.0
    with pytest.raises(ValueError, match="empty"):
        stats.describe([])


def test_tests_equal_scipy_and_statsmodels(samples):
    a, b = samples
    w = sps.ttest_ind(a, b, equal_var=False)
    assert stats.welch(a, b).pvalue == pytest.approx(w.pvalue)
    assert stats.welch(a, b).df == pytest.approx(w.df)
    assert stats.paired_t(a, b).pvalue == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert stats.wilcoxon(a, b).pvalue == pytest.approx(sps.wilcoxon(a, b).pvalue)
    p, _, _ = ttost_ind(a, b, -2.0, 2.0, usevar="unequal")
    assert stats.tost(a, b, 2.0).pvalue == pytest.approx(p)
    ps = [0.01, 0.04, 0.03, 0.2]
    assert stats.holm(ps) == pytest.approx(list(multipletests(ps, method="holm")[1]))


def test_wilcoxon_drops_zero_differences():
    a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    b = [1.0, 1.0, 2.0, 2.5, 3.0, 4.5]  # one zero difference
    expected = sps.wilcoxon(np.array(a[1:]) - np.array(b[1:])).pvalue
    assert stats.wilcoxon(a, b).pvalue == pytest.approx(expected)


def test_cohens_dz_hand_computed():
    d = np.array([1.0, 2.0, 3.0])
    assert stats.cohens_dz(d, np.zeros(3)) == pytest.approx(2.0 / 1.0)


def test_paper_values():
    # 7 of 8 cross-task wins: one-sided binomial p = 9/256 = 0.035 (Table crosstask_full).
    assert stats.binomial(7, 8).pvalue == pytest.approx(9 / 256)
    # d_z = 0.63 at n = 20 seeds <-> paired t p = 0.011 (Table compositional).
    t = 0.63 * np.sqrt(20)
    assert 2 * sps.t.sf(t, 19) == pytest.approx(0.011, abs=0.001)


def test_bad_inputs():
    with pytest.raises(ValueError, match="differ in length"):
        stats.paired_t([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="margin must be positive"):
        stats.tost([1, 2], [1, 2], 0.0)


# --- from summary statistics --------------------------------------------------------


def test_rounding_interval_hand_values():
    assert stats.rounding_interval("50.4") == pytest.approx((50.35, 50.45))
    assert stats.rounding_interval("0.011") == pytest.approx((0.0105, 0.0115))
    assert stats.rounding_interval("7") == pytest.approx((6.5, 7.5))
    assert stats.rounding_interval("-0.1") == pytest.approx((-0.15, -0.05))
    assert stats.rounding_interval("1.30") == pytest.approx((1.295, 1.305))  # trailing 0 counts
    for bad in ("abc", "nan", "1.2.3", ""):
        with pytest.raises(ValueError, match="not a printed decimal"):
            stats.rounding_interval(bad)


def test_welch_from_stats_hand_computed():
    # Table scaling, Qwen-7B at n = 6/6: t = -0.1 / sqrt(2 * 1.8^2 / 6), df = 10.
    r = stats.welch_from_stats(50.4, 1.8, 6, 50.5, 1.8, 6)
    assert r.statistic == pytest.approx(-0.1 / np.sqrt(2 * 1.8**2 / 6))
    assert r.statistic == pytest.approx(-0.0962250, abs=1e-6)
    assert r.df == pytest.approx(10.0)
    assert r.pvalue == pytest.approx(2 * sps.t.sf(0.0962250, 10), abs=1e-6)
    direct = sps.ttest_ind_from_stats(50.4, 1.8, 6, 50.5, 1.8, 6, equal_var=False)
    assert r.pvalue == pytest.approx(direct.pvalue)
    # Unequal sds (14B, n = 3/3): v1 = 2.89/3, v2 = 7.84/3, df = (v1+v2)^2 / ((v1^2+v2^2)/2).
    r = stats.welch_from_stats(57.3, 1.7, 3, 56.9, 2.8, 3)
    assert r.df == pytest.approx(3.29810, abs=1e-4)
    assert r.statistic == pytest.approx(0.4 / np.sqrt(2.89 / 3 + 7.84 / 3))
    assert r.pvalue == pytest.approx(
        sps.ttest_ind_from_stats(57.3, 1.7, 3, 56.9, 2.8, 3, equal_var=False).pvalue)


def test_student_from_stats_hand_computed():
    # Pooled: sp^2 = (1.7^2 + 2.8^2) / 2 = 5.365, se = sqrt(5.365 * 2/3), df = 4.
    r = stats.student_from_stats(57.3, 1.7, 3, 56.9, 2.8, 3)
    assert r.statistic == pytest.approx(0.4 / np.sqrt(5.365 * 2 / 3))
    assert r.statistic == pytest.approx(0.211505, abs=1e-6)
    assert r.df == 4.0
    assert r.pvalue == pytest.approx(2 * sps.t.sf(0.211505, 4), abs=1e-6)
    assert r.pvalue == pytest.approx(
        sps.ttest_ind_from_stats(57.3, 1.7, 3, 56.9, 2.8, 3, equal_var=True).pvalue)
    with pytest.raises(ValueError, match="n >= 2"):
        stats.student_from_stats(1.0, 1.0, 1, 0.0, 1.0, 3)


def test_t_tails_thin_with_df():
    # The property the p-range search rests on: at fixed |t|, two-sided p falls as df rises.
    t = np.concatenate([np.linspace(1e-3, 1, 50), np.linspace(1, 30, 100)])
    nus = np.concatenate([np.linspace(1, 3, 40), np.linspace(3, 200, 100)])
    p = np.array([2 * sps.t.sf(t, nu) for nu in nus])
    assert np.all(np.diff(p, axis=0) <= 1e-15)


def test_pvalue_range_overlapping_means_reach_p_one():
    # 50.4 and 50.5 overlap at 50.45: D = 0 is reachable, so p can be 1.
    r = stats.ttest_pvalue_range(Box((50.35, 50.45), (1.75, 1.85), 6),
                                 Box((50.45, 50.55), (1.75, 1.85), 6))
    assert r.high == 1.0
    assert r.high_at[0] == r.high_at[2] == pytest.approx(50.45)
    # the smallest p uses the largest |D| = 0.2 and the smallest sds (equal n: a corner)
    assert r.low == pytest.approx(stats.welch_from_stats(50.35, 1.75, 6, 50.55, 1.75, 6).pvalue)
    assert r.low_at == pytest.approx((50.35, 1.75, 50.55, 1.75))


def test_pvalue_range_student_extremes_are_corners():
    # Means 2.0 and 1.0, sds 1.0 (printed to 1 decimal), n = 3/3: D in [0.9, 1.1].
    # Student's df is fixed (4) and p rises with each sd, so:
    # min p at D = 1.1, sds 0.95: t = 1.1 / (0.95 sqrt(2/3)) = 1.418126
    # max p at D = 0.9, sds 1.05: t = 0.9 / (1.05 sqrt(2/3)) = 1.049781
    r = stats.ttest_pvalue_range(Box((1.95, 2.05), (0.95, 1.05), 3),
                                 Box((0.95, 1.05), (0.95, 1.05), 3), equal_var=True)
    assert r.low == pytest.approx(2 * sps.t.sf(1.418126, 4), abs=1e-6)
    assert r.high == pytest.approx(2 * sps.t.sf(1.049781, 4), abs=1e-6)
    assert r.low_at == pytest.approx((2.05, 0.95, 0.95, 0.95))
    assert r.high_at == pytest.approx((1.95, 1.05, 1.05, 1.05))


def _brute_force(d, s1, s2, n1, n2, k=801):
    a, b = np.meshgrid(np.linspace(*s1, k), np.linspace(*s2, k), indexing="ij")
    return sps.ttest_ind_from_stats(d, a, n1, 0.0, b, n2, equal_var=False).pvalue


def test_pvalue_range_welch_same_box_hand_worked():
    # Equal n and equal sd boxes: the smallest SE and the largest Welch df (r = 1/2) meet
    # at the inner corner, so the minimum is Student's corner value (df = 2(n-1) = 4).
    r = stats.ttest_pvalue_range(Box((1.95, 2.05), (0.95, 1.05), 3),
                                 Box((0.95, 1.05), (0.95, 1.05), 3))
    assert r.low == pytest.approx(2 * sps.t.sf(1.418126, 4), abs=1e-6)
    # The maximum lies on the outer edges; an independent 2-D grid agrees.
    assert r.high == pytest.approx(_brute_force(0.9, (0.95, 1.05), (0.95, 1.05), 3, 3).max(),
                                   abs=1e-6)


def test_pvalue_range_welch_minimum_inside_an_edge():
    # Welch p is not monotone in an sd: with D = 1 exact, n = 3/3, s1 in [0.1, 1.0],
    # s2 in [0.5, 2.0], the smallest p sits on the inner edge s2 = 0.5 with s1 strictly
    # inside (about 0.31) - below all four corners, so a corner search would miss it.
    s1, s2 = (0.1, 1.0), (0.5, 2.0)
    r = stats.ttest_pvalue_range(Box((1.0, 1.0), s1, 3), Box((0.0, 0.0), s2, 3))
    corners = [stats.welch_from_stats(1.0, a, 3, 0.0, b, 3).pvalue for a in s1 for b in s2]
    assert r.low < min(corners) - 0.01
    assert 0.1 < r.low_at[1] < 1.0 and r.low_at[3] == pytest.approx(0.5)
    assert r.low == pytest.approx(_brute_force(1.0, s1, s2, 3, 3).min(), abs=1e-6)
    p = [stats.welch_from_stats(1.0, x, 3, 0.0, 0.5, 3).pvalue for x in (0.1, r.low_at[1], 1.0)]
    assert p[0] > p[1] < p[2]  # down, then up: not monotone in s1
    assert r.high == pytest.approx(_brute_force(1.0, s1, s2, 3, 3).max(), abs=1e-6)


def test_pvalue_range_paper_7b_cannot_tell_n():
    # Welch text: p = 0.93 at n = 6/6; Table scaling's caption says 3 seeds.
    iv = stats.rounding_interval
    for n in (3, 6):
        r = stats.ttest_pvalue_range(Box(iv("50.4"), iv("1.8"), n), Box(iv("50.5"), iv("1.8"), n))
        assert r.low < 0.93 < r.high == 1.0


def test_pvalue_range_bad_input():
    with pytest.raises(ValueError, match="lo <= hi"):
        stats.ttest_pvalue_range(Box((2.0, 1.0), (1, 1), 3), Box((0, 0), (1, 1), 3))
    with pytest.raises(ValueError, match="standard deviation"):
        stats.ttest_pvalue_range(Box((1, 1), (-0.2, -0.1), 3), Box((0, 0), (1, 1), 3))


def test_paired_from_dz_hand_computed():
    # d_z = 0.63 over n = 20 pairs: t = 0.63 sqrt(20) = 2.817446, df = 19 -> p = 0.011.
    r = stats.paired_from_dz(0.63, 20)
    assert r.statistic == pytest.approx(2.817446, abs=1e-6)
    assert r.df == 19.0
    assert r.pvalue == pytest.approx(2 * sps.t.sf(2.817446, 19), abs=1e-7)
    assert round(r.pvalue, 3) == 0.011
    # the same as a one-sample t test of differences with mean/sd = d_z
    d = np.array([1.0, 2.0, 3.0, 0.5])
    dz = d.mean() / d.std(ddof=1)
    assert stats.paired_from_dz(dz, 4).pvalue == pytest.approx(sps.ttest_1samp(d, 0).pvalue)
    with pytest.raises(ValueError, match="n >= 2"):
        stats.paired_from_dz(0.5, 1)


def test_paired_sd_for_p_round_trip():
    sd = stats.paired_sd_for_p(5.5, 21, 0.0001)
    t = 5.5 / (sd / np.sqrt(21))
    assert 2 * sps.t.sf(t, 20) == pytest.approx(0.0001)
    with pytest.raises(ValueError, match="p must lie"):
        stats.paired_sd_for_p(5.5, 21, 0.0)


def test_wilcoxon_sign_pvalues_hand_computed():
    # n = 5 non-zero differences, 2 negative: W- runs from 1+2 = 3 to 4+5 = 9. The 32
    # subsets of {1..5} have sums 0,1,2,3,3,4,4,5,5,5,6,6,6,7,7,7 (and mirror), so
    # p(W-=3) = 2 * 5/32, p(W-=9) = p(W+=6) = 2 * 13/32, p(W-=7) = 2 * 16/32 = 1.
    p = stats.wilcoxon_sign_pvalues(3, 2)
    assert list(p) == [3, 4, 5, 6, 7, 8, 9]
    assert p[3] == pytest.approx(10 / 32)
    assert p[9] == pytest.approx(26 / 32)
    assert p[7] == pytest.approx(1.0)
    # CSMC: 18 positive, 1 negative of 19 - the negative at rank 1 gives 2 * 2 / 2^19.
    p = stats.wilcoxon_sign_pvalues(18, 1)
    assert p[1] == pytest.approx(4 / 2**19)
    assert [w for w, v in p.items() if 0.00025 <= v <= 0.00035] == [12, 13]
    with pytest.raises(ValueError, match="sign counts"):
        stats.wilcoxon_sign_pvalues(0, 0)
