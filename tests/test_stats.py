import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_ind

from dfil import stats


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
