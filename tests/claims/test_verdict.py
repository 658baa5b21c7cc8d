"""dfil.claims.verdict: each outcome of the one-p rule, and what an inconclusive claim
could have detected, by hand."""

import pytest
from statsmodels.stats.power import TTestPower

from dfil import stats
from dfil.claims.evidence import Evidence
from dfil.claims.verdict import VERDICTS, decide, detectable, mde, verdict_counts

EV = Evidence("Welch's t, two-sided (the paper's Δ > 0)", 3, 3, 4.5, 3.0, 6.0, 0.01,
              stats.Trial("welch", 2.0))


def test_each_outcome_of_the_rule():
    assert decide(4.0, None, None) == ("not run", "the grid has no run for one side")
    assert decide(None, EV, 0.01)[0] == "not comparable"
    flat = Evidence("t", 3, 3, 2.0, 2.0, 2.0, degenerate="degenerate (zero variance)")
    assert decide(4.0, flat, None) == ("not comparable", "degenerate (zero variance)")
    assert decide(4.0, EV, 0.02) == (
        "reproduced", "Welch's t, two-sided (the paper's Δ > 0): p_holm = 0.02 < 0.05, "
        "estimate +4.5 [+3, +6] in the paper's direction")
    # the same p with the paper's sign the other way: the estimate contradicts it
    verdict, why = decide(-4.0, EV, 0.02)
    assert verdict == "contradicted" and "against the paper's -4" in why
    verdict, why = decide(4.0, EV, 0.2, "this grid cannot detect ...")
    assert (verdict, why) == ("inconclusive", "Welch's t, two-sided (the paper's Δ > 0): "
                                              "p_holm = 0.2; this grid cannot detect ...")
    assert decide(4.0, Evidence("t", 1, 3, 2.0), None)[0] == "inconclusive"
    # p = 0.05 exactly is not below alpha
    assert decide(4.0, EV, 0.05)[0] == "inconclusive"


def test_a_parity_is_reproduced_within_its_margin_and_contradicted_beyond_it():
    within = Evidence("TOST", 5, 5, 0.2, -0.1, 0.5, 0.01, stats.Trial("welch", 1.0, 1.0),
                      margin=1.0)
    assert decide(0.1, within, 0.01)[0] == "reproduced"
    beyond = Evidence("TOST", 5, 5, 2.5, 2.0, 3.0, 0.001, stats.Trial("welch", 1.0, 1.0),
                      margin=1.0)
    verdict, why = decide(0.1, beyond, 0.004)
    assert verdict == "contradicted" and "beyond the margin ±1" in why


def test_what_an_inconclusive_claim_could_have_detected():
    # a direction: the MDE of its paired test at n = 8, sd 2, at the family's level
    # 0.05 / 4: TTestPower one-sided at 0.00625, power 0.8, times the sd
    ev = Evidence("paired t", 8, None, 1.0, -1.0, 3.0, 0.3, stats.Trial("paired", 2.0))
    by_hand = 2.0 * TTestPower().solve_power(None, nobs=8, alpha=0.00625, power=0.8,
                                             alternative="larger")
    assert mde(ev, 0.0125) == pytest.approx(by_hand, rel=1e-6)
    words = detectable(ev, 4.0, 0.0125)
    assert words == (f"this grid cannot detect an effect smaller than {by_hand:.3g} points "
                     "(alpha 0.0125 = 0.05/4, power 0.8, this n and spread)")
    # a parity: never an MDE; its margin and the seeds TOST needs at the paper's Δ
    par = Evidence("TOST", 3, 3, 0.1, -2.0, 2.2, 0.4, stats.Trial("welch", 1.8, 0.5),
                   margin=0.5)
    n = stats.n_for_power(stats.Trial("welch", 1.8, 0.5), 0.1, 0.05, 0.8)
    assert mde(par, 0.05) is None and n > 200
    assert detectable(par, 0.1, 0.05) == (
        f"TOST within the margin ±0.5 needs {n} seeds a side for power 0.8 (alpha 0.05, a "
        "true difference of the paper's +0.1, this spread)")
    assert "cannot establish it at any n" in detectable(par, 0.7, 0.05)


def test_counts_in_the_order_of_the_words():
    rows = [{"verdict": v} for v in ("inconclusive", "reproduced", "inconclusive")]
    assert verdict_counts(rows) == {"reproduced": 1, "by construction": 0, "contradicted": 0,
                                    "inconclusive": 2, "not comparable": 0, "not run": 0}
    assert list(VERDICTS) == ["reproduced", "by construction", "contradicted", "inconclusive",
                              "not comparable", "not run"]
