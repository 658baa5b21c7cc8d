"""Printed numbers, their rounding intervals and interval arithmetic (dfil.audit.printed)."""

import pytest

from dfil.audit.printed import Interval, evaluate, fmt, mean_sd, point_value, printed, printed_range


def test_printed_strings_are_rounded_numbers_are_exact():
    p = printed("50.4")
    assert (p.value, p.exact) == (50.4, False)
    assert (p.interval.lo, p.interval.hi) == pytest.approx((50.35, 50.45))
    assert printed(2044).interval == Interval(2044.0, 2044.0) and printed(2044).exact
    assert printed("1,959,395").value == 1959395
    assert printed("+1.7").value == pytest.approx(1.7)
    assert printed("\u22120.1").value == pytest.approx(-0.1)  # U+2212 minus, as in LaTeX
    assert printed("0.1%").interval.hi == pytest.approx(0.15)
    assert printed("≈0.012").interval.lo == pytest.approx(0.0115)
    assert printed(".352").interval.lo == pytest.approx(0.3515)
    assert printed("2.9×").value == pytest.approx(2.9)
    with pytest.raises(ValueError, match="not a printed number: 'six'"):
        printed("six")
    with pytest.raises(ValueError, match="not a number"):
        printed(True)


def test_mean_sd_and_ranges():
    m, s = mean_sd("31.5 ± 0.3")
    assert (m.value, s.value) == (31.5, 0.3)
    with pytest.raises(ValueError, match="mean ± sd"):
        mean_sd("31.5")
    lo, hi = printed_range("p∈[0.43, 0.97]")
    assert (lo.value, hi.value) == (0.43, 0.97)
    lo, hi = printed_range("−0.1 to +1.9pp")
    assert (lo.value, hi.value) == pytest.approx((-0.1, 1.9))
    assert [p.value for p in printed_range("0.78–0.83")] == [0.78, 0.83]
    with pytest.raises(ValueError, match="range of two numbers"):
        printed_range("+2.6 to +4.7pp on SST-5")  # three numbers: give `claimed`


def test_interval_arithmetic_hand_values():
    a, b = Interval(1.0, 2.0), Interval(-1.0, 3.0)
    assert a + b == Interval(0.0, 5.0)
    assert a - b == Interval(-2.0, 3.0)
    assert a * b == Interval(-2.0, 6.0)
    assert a / Interval(2.0, 4.0) == Interval(0.25, 1.0)
    assert b ** Interval.point(2) == Interval(0.0, 9.0)  # straddles 0: the square's floor is 0
    with pytest.raises(ValueError, match="containing 0"):
        a / b
    with pytest.raises(ValueError, match="lo <= hi"):
        Interval(2.0, 1.0)


def test_overlap_excludes_touching_rounding_intervals():
    # "9.2" and "9.3" touch at 9.25, which no single rounding convention prints both ways.
    assert not printed("9.2").interval.overlaps(printed("9.3").interval)
    assert printed("9.2").interval.overlaps(printed("9.25").interval)
    # a point (an exact recomputation) on the boundary is inside
    assert Interval.point(9.25).overlaps(printed("9.3").interval)


def test_evaluate_expressions():
    env = {"dfil": printed("31.2").interval, "ft": printed("16.4").interval}
    d = evaluate("dfil - ft", env)
    assert (d.lo, d.hi) == pytest.approx((14.7, 14.9))
    assert point_value("(600 * l1 + 300 * l2) / 900", {"l1": 7.0, "l2": 13.7}) == \
        pytest.approx(27.7 / 3)
    assert evaluate("max(a, b) - min(a, b)", {"a": Interval(1, 2), "b": Interval(3, 4)}) == \
        Interval(1, 3)
    assert evaluate("floor(x)", {"x": Interval(16.2, 16.9)}) == Interval(16, 16)
    assert evaluate("abs(x)", {"x": Interval(-1, 2)}) == Interval(0, 2)
    assert evaluate("d / log2(q)", {"d": Interval.point(3584), "q": Interval.point(8)}).lo == \
        pytest.approx(3584 / 3)


@pytest.mark.parametrize("expr", ["__import__('os')", "x.real", "open('f')", "x if x else 1",
                                  "[x]", "x < 1", "'a'"])
def test_evaluate_rejects_anything_but_arithmetic(expr):
    with pytest.raises(ValueError, match="not allowed|cannot parse"):
        evaluate(expr, {"x": Interval(1, 2)})


def test_evaluate_names_unknown_inputs():
    with pytest.raises(ValueError, match="names 'y'"):
        evaluate("x + y", {"x": Interval(1, 2)})


def test_fmt():
    assert fmt(2577672.0) == "2,577,672"
    assert fmt(0.0109973) == "0.011"
    assert fmt(7.6e-6) == "7.600e-06"
    assert fmt(0) == "0"
