"""Each kind of check on hand-worked inputs (dfil.audit.kinds)."""

import numpy as np
import pytest
from scipy import stats as sps

from dfil.audit import claims, kinds


def test_ttest_reports_the_printed_p_and_its_rounding_range():
    f = kinds.ttest({"a": "31.3 ± 2.7", "b": "16.6 ± 4.4", "n": [3, 3]}, "0.012")
    p = sps.ttest_ind_from_stats(31.3, 2.7, 3, 16.6, 4.4, 3, equal_var=False).pvalue
    assert f.ok and f.recomputed.startswith(f"p = {p:.3g}")
    assert "within the inputs' rounding" in f.detail  # 0.0125 at the printed values
    assert not kinds.ttest({"a": "31.3 ± 2.7", "b": "16.6 ± 4.4", "n": [3, 3]}, "0.05").ok
    student = kinds.ttest({"a": "57.3 ± 1.7", "b": "56.9 ± 2.8", "n": [3, 3],
                           "test": "student", "claimed": "0.84"}, "p=0.84")
    assert "Student t = 0.212, df = 4" in student.detail


def test_paired_dz_and_paired_t():
    f = kinds.paired_dz({"dz": "0.63", "n": 20}, "0.011")
    assert f.ok and "df = 19" in f.detail
    assert not kinds.paired_dz({"dz": "0.63", "n": 10}, "0.011").ok  # t = 1.99, p = 0.077
    f = kinds.paired_t({"mean_diff": "5.50", "n": 21}, "0.0001")
    assert f.ok is None and f.recomputed == "not recomputable"
    assert "needs sd(differences) in [" in f.detail


def test_wilcoxon_signs_names_the_ranks():
    f = kinds.wilcoxon_signs({"n_pos": 18, "n_neg": 1, "n_zero": 2}, "0.0003")
    assert f.ok and "W- is 12" in f.detail and "13 (p" in f.detail
    assert not kinds.wilcoxon_signs({"n_pos": 18, "n_neg": 1}, "0.01").ok


def test_binomial_one_and_two_sided():
    assert kinds.binomial({"k": 7, "n": 8, "alternative": "greater"}, "0.035").ok  # 9/256
    assert not kinds.binomial({"k": 7, "n": 8, "alternative": "two-sided"}, "0.035").ok


def test_describe_sd_range_hand_worked():
    # T3's DFIL QuRe-based cell: seeds 31.9, 31.6, 31.1 (each +-0.05). The least ddof=1 sd
    # pulls the ends in and the middle to their mean, clipped to its box: (31.85, 31.55,
    # 31.15) -> sd = sqrt(0.24667 / 2) = 0.3512 > 0.35, so "0.3" is out of reach;
    # ddof=0 at the printed values: sqrt(0.32667 / 3) = 0.3300.
    f = kinds.describe({"values": ["31.9", "31.6", "31.1"]}, "31.5 ± 0.3")
    assert not f.ok and "sd [0.351, 0.458]" in f.detail
    assert kinds.describe({"values": ["31.9", "31.6", "31.1"], "ddof": 0}, "31.5 ± 0.3").ok
    assert kinds.describe({"values": ["31.9", "31.6", "31.1"]}, "31.5 ± 0.4").ok
    lo, hi = kinds._sd_range(np.array([31.85, 31.55, 31.05]), np.array([31.95, 31.65, 31.15]), 1)
    assert lo == pytest.approx(np.std([31.85, 31.55, 31.15], ddof=1))
    # the greatest is a vertex: (31.95, 31.65, 31.05), mean 31.55, sd = sqrt(0.42 / 2)
    assert hi == pytest.approx(np.sqrt(0.42 / 2))
    # sd only (a text quoting one sd), and a box whose least sd is 0 (all can be equal)
    assert kinds.describe({"values": ["9.2", "23.9", "16.1"], "ddof": 0, "compare": "sd"},
                          "6.0%").ok
    assert kinds._sd_range(np.array([1.0, 1.05]), np.array([1.1, 1.2]), 1)[0] == \
        pytest.approx(0.0)


def test_arithmetic_eq_and_inequalities():
    f = claims.arithmetic({"expr": "a - b", "values": {"a": "31.2", "b": "25.4"}}, "+5.9")
    assert f.ok and "5.8" in f.recomputed and "rounding" in f.detail
    assert not claims.arithmetic({"expr": "a - b", "values": {"a": "31.2", "b": "25.4"}},
                                "+6.0").ok
    gt = {"expr": "a - b", "values": {"a": "50.4", "b": "24.4"}, "relation": "gt",
          "claimed": 25}
    assert claims.arithmetic(gt, "more than 25").ok
    assert not claims.arithmetic({**gt, "claimed": 27}, "more than 27").ok
    assert claims.arithmetic({"expr": "n * (n - 1) / 2", "values": {"n": 2044}},
                            "2,087,946").ok


def test_range_count_argmax():
    f = claims.range_claim({"values": {"a": "0.93", "b": "0.43", "c": "0.97"}}, "[0.43, 0.93]")
    assert not f.ok and f.recomputed == "0.43 to 0.97"
    assert claims.range_claim({"values": {"a": "0.93", "b": "0.43"}}, "[0.43, 0.93]").ok
    # 2 certainly greater, 1 undecided within rounding (39.1 vs 39.0 touch at 39.05)
    items = {"x": ["2.0", "1.0"], "y": ["39.1", "39.0"], "z": ["1.0", "2.0"]}
    f = claims.count({"items": items, "predicate": "greater"}, "2")
    assert f.ok and f.recomputed == "1 to 2 of 3"
    assert not claims.count({"items": items, "predicate": "greater"}, "3").ok
    same = {"r1": ["48.0 ± 0.1", "48.0  ±  0.1"], "r2": ["39.2 ± 1.3", "41.6 ± 1.0"]}
    assert claims.count({"items": same, "predicate": "identical", "claimed": 1}, "x").ok
    assert claims.count({"items": {"a": ["+1.7", 1], "b": ["-0.4", 1]},
                        "predicate": "abs_le", "claimed": 1}, "x").ok
    f = claims.argmax({"values": {"main": "34.18", "ens": "34.86"}, "claimed": "main"}, "x")
    assert not f.ok and f.recomputed == "ens (34.86)"
    assert claims.argmax({"values": {"a": "1.0", "b": "1.0"}, "claimed": "b"}, "x").ok
    with pytest.raises(ValueError, match="not among the values"):
        claims.argmax({"values": {"a": "1.0"}, "claimed": "z"}, "x")


def test_integer_counts_grim_and_sd():
    # 96.40 over 21 seeds x 200 pairs: total K in [96.395, 96.405] * 42 = [4048.59, 4049.01]
    f = claims.integer_counts({"items": 200, "units": 21}, "96.40")
    assert f.ok and f.recomputed.startswith("4049/4200")
    # 96.41 is not a mean of 21 seeds' k/200 (K = 4049.22 needs a fraction)
    assert not claims.integer_counts({"items": 200, "units": 21}, "96.41").ok
    # 22.2 ± 12.7 over 3 seeds x 12 sentences: counts (1, 3, 4) -> 8.3, 25.0, 33.3
    f = claims.integer_counts({"items": 12, "units": 3}, "22.2 ± 12.7")
    assert f.ok and "(1, 3, 4)" in f.recomputed
    assert not claims.integer_counts({"items": 12, "units": 3}, "22.2 ± 12.0").ok


def test_nearest_center_labels_of_a_rounded_p():
    qure = {"none": ".020", "tiny": ".080", "few": ".180", "small": ".280", "some": ".400",
            "moderate": ".580", "most": ".780", "all": ".970"}
    f = claims.nearest({"p": "0.61", "centers": qure}, "some")
    assert not f.ok and f.recomputed == "moderate"
    # 0.49 is the some/moderate midpoint: a p printed as 0.49 can go either way
    assert claims.nearest({"p": "0.49", "centers": qure}, "moderate").recomputed == \
        "some or moderate"
    with pytest.raises(ValueError, match="increasing order"):
        claims.nearest({"p": "0.5", "centers": {"a": ".5", "b": ".4"}}, "a")
