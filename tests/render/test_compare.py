import pytest

from dfil.render.compare import half_digit, judge, t_interval


def test_t_interval_by_hand():
    # mean 2, s 1, n 3: t(0.975, 2) = 4.302653, half width 4.302653 / sqrt(3) = 2.484138
    lo, hi = t_interval([1.0, 2.0, 3.0])
    assert lo == pytest.approx(2 - 2.484138, abs=1e-6)
    assert hi == pytest.approx(2 + 2.484138, abs=1e-6)
    assert t_interval([5.0]) is None


@pytest.mark.parametrize("printed, half", [("48.0", 0.05), (51, 0.5), ("40.3±0.1", 0.05),
                                           ("0.125", 0.0005), ("—", 0.0)])
def test_half_digit_of_the_printed_number(printed, half):
    assert half_digit(printed) == pytest.approx(half)


def test_paper_inside_the_interval_widened_by_its_rounding():
    # interval [-0.484, 4.484]; the paper's 4.5 printed with one decimal: slack 0.05
    assert judge(4.5, "4.5", [1.0, 2.0, 3.0], 2.0, None).verdict == "inconclusive"
    assert judge(4.6, "4.6", [1.0, 2.0, 3.0], 2.0, None).verdict == "contradicted"
    assert "n=3" in judge(4.6, "4.6", [1.0, 2.0, 3.0], 2.0, None).basis


def test_one_value_is_judged_by_the_tolerance():
    assert judge(40.4, "40.4", (), 40.0, None).verdict == "inconclusive"
    v = judge(41.0, "41.0", (), 40.0, None)
    assert (v.verdict, v.basis) == ("contradicted",
                                  "one value: tolerance ±0.5: the paper's value outside")


def test_not_run_and_not_comparable_are_never_failures():
    assert judge(40.0, "40.0", (), None, None).verdict == "not run"
    v = judge(97.9, "97.9", [80.0, 86.0, 94.0], 86.7, "stand-in grid")
    assert (v.verdict, v.basis) == ("not comparable", "stand-in grid")
