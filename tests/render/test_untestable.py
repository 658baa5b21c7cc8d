"""A test entry prints no p where the samples allow none: constant per-seed differences
(paired t, d_z) or two constant samples (Welch) give an infinite t, which would print as
p = 0 although no spread was measured; the entry is a dash with what is true."""

import pandas as pd
import pytest

from dfil.render.resolve import _test_value, untestable


def _s(*values, seeds=(1, 2, 3)):
    return pd.Series(values, index=[str(s) for s in seeds], dtype=float)


def test_constant_paired_differences_give_no_p_and_say_so():
    a, b = _s(44.0, 45.0, 46.0), _s(40.0, 41.0, 42.0)  # a - b = +4 on every seed
    for kind, what in (("paired_t", "no p"), ("dz", "no d_z")):
        assert _test_value({"test": kind}, a, b) is None
        assert untestable({"test": kind}, a, b) == (
            f"the paired differences are constant (+4 on each of 3 seeds, no spread): {what}")


def test_constant_differences_after_scaling_rounding_are_still_constant():
    # 0.443 * 100 - 0.403 * 100 is 4.000000000000007 on one seed, 4.0 on another
    a = _s(0.443 * 100, 0.453 * 100, 0.463 * 100)
    b = _s(0.403 * 100, 0.413 * 100, 0.423 * 100)
    assert _test_value({"test": "paired_t"}, a, b) is None


def test_two_constant_welch_samples_give_no_p():
    a, b = _s(50.0, 50.0, 50.0), _s(48.0, 48.0, seeds=(1, 2))
    assert _test_value({"test": "welch"}, a, b) is None
    assert untestable({"test": "welch"}, a, b) == (
        "each side is constant (50 on 3 seeds, 48 on 2; no spread): no p")


def test_differences_with_spread_are_tested():
    # d = (4, 5, 6): mean 5, sd 1, t = 5 / (1 / sqrt 3) = 8.660, df 2: p = 0.01307
    a, b = _s(44.0, 45.0, 46.0), _s(40.0, 40.0, 40.0)
    assert untestable({"test": "paired_t"}, a, b) == ""
    assert _test_value({"test": "paired_t"}, a, b) == pytest.approx(0.013072, abs=1e-6)
    assert _test_value({"test": "dz"}, a, b) == pytest.approx(5.0)


def test_a_paired_test_reads_the_seeds_both_sides_hold():
    a = _s(44.0, 45.0, 46.0, seeds=(1, 2, 3))
    b = _s(40.0, 41.0, 0.0, seeds=(1, 2, 4))  # seeds 1, 2: differences +4, +4
    assert untestable({"test": "paired_t"}, a, b) == (
        "the paired differences are constant (+4 on each of 2 seeds, no spread): no p")
    assert untestable({"test": "paired_t"}, _s(1.0, seeds=(1,)), _s(2.0, seeds=(1,))) == (
        "a test needs two seeds a side")
    assert untestable({"test": "paired_t"}, a, a) == "identical samples: no test"
