"""dfil.claims.verdict: Holm by family and each outcome of the rule, by hand."""

import pytest

from dfil.claims.evidence import Evidence
from dfil.claims.verdict import VERDICTS, decide, holm, holm_by_family, verdict_counts

EV = Evidence("Welch's t, one-sided", 3, 3, 4.5, 3.0, 6.0, 0.01, 0.99, 6.1,
              against="the one-sided test the other way (the opposite sign)")


def test_holm_on_a_small_example():
    # sorted 0.01, 0.03, 0.04: 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.2, None]) == [pytest.approx(0.2), None]


def test_holm_adjusts_within_each_family_only():
    out = holm_by_family([0.01, 0.04, 0.03, 0.02], ["primary", "exploratory", "primary",
                                                     "exploratory"])
    assert out == pytest.approx([0.02, 0.04, 0.03, 0.04])


def test_each_outcome_of_the_rule():
    assert decide(4.0, None, None, None) == ("not run", "the grid has no run for one side")
    assert decide(None, EV, 0.01, 0.99)[0] == "not comparable"
    flat = Evidence("t", 3, 3, 2.0, 2.0, 2.0, 0.0, 1.0, 0.0, "degenerate (zero variance)")
    assert decide(4.0, flat, 0.0, 1.0) == ("not comparable", "degenerate (zero variance)")
    assert decide(4.0, EV, 0.02, 0.99) == ("reproduced",
                                           "Welch's t, one-sided: p_holm = 0.02 < 0.05")
    verdict, why = decide(4.0, EV, 0.9, 0.03)
    assert verdict == "contradicted" and "the other way" in why and "0.03" in why
    verdict, why = decide(4.0, EV, 0.2, 0.8)
    assert verdict == "inconclusive"
    assert why.endswith("this grid cannot detect an effect smaller than 6.1 points (alpha "
                        "0.05, power 0.8, this n and spread)")
    one = Evidence("t", 1, 3, 2.0)
    assert decide(4.0, one, None, None)[0] == "inconclusive"
    # p = 0.05 exactly is not below alpha
    assert decide(4.0, EV, 0.05, 0.05)[0] == "inconclusive"


def test_counts_in_the_order_of_the_words():
    rows = [{"verdict": v} for v in ("inconclusive", "reproduced", "inconclusive")]
    assert verdict_counts(rows) == {"reproduced": 1, "by construction": 0, "contradicted": 0,
                                    "inconclusive": 2, "not comparable": 0, "not run": 0}
    assert list(VERDICTS) == ["reproduced", "by construction", "contradicted", "inconclusive",
                              "not comparable", "not run"]
