"""What the grid that ran can show of a claim: power at the seeds that ran, by Cohen's
tables, and planned or not by the grid's plan block (by its id or a place's)."""


import pytest

from dfil.config.gridfile import PlanRecord
from dfil.plan.achieved import achieved, power_at, standings
from dfil.plan.claims import PaperClaim, Side


def claim(test="welch", effect=0.8, stds=(1.0, 1.0), n=(26, 26), cid="T5:a/delta",
          margin=0.0, why_not="", places=()):
    sides = tuple(Side(None, s, k, ("frog/x",)) for s, k in zip(stds, n, strict=True))
    return PaperClaim(cid, 5, cid, effect, test, margin, sides, True, why_not, places)


def test_power_at_the_seeds_that_ran_is_cohens():
    # Cohen (1988) Table 2.3.2: d = 0.8 at 26 a group, two-sided alpha 0.05 -> 0.81
    assert power_at(claim(), 26) == pytest.approx(0.807, abs=0.005)
    # d_z = 0.5 at n = 34, one-sample: 34 is the least n reaching 0.8 (test_power)
    assert power_at(claim("one_sample", 0.5, (1.0,), (34,)), 34) == pytest.approx(0.81,
                                                                                  abs=0.01)


@pytest.mark.slow
def test_a_parity_has_its_simulated_power():
    parity = claim("tost", 0.0, (1.0, 1.0), (10, 10), margin=2.0)
    assert 0.9 < power_at(parity, 10) <= 1.0


def test_the_mde_is_the_claims_packages_alone():
    import dfil.plan.achieved as achieved_mod

    assert not hasattr(achieved_mod, "mde_at")
    assert not hasattr(achieved(claim()), "mde")


def test_unequal_sides_use_the_smaller_n():
    a = achieved(claim(n=(5, 3)))
    assert a.n == 3 and a.power == power_at(claim(), 3) and a.planned is None


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"stds": (None, 1.0)}, "spread unknown"),
    ({"n": (1, 3)}, "n=1: fewer than 2 seeds a side"),
    ({"why_not": "the grid has no cell for one side"}, "the grid has no cell for one side"),
])
def test_no_power_says_why(kwargs, why):
    a = achieved(claim(**kwargs))
    assert a.power is None and a.why == why


def test_standings_say_which_claims_the_plan_took_at_its_level():
    claims = [claim(cid="T5:a/delta"), claim(cid="T5:b/delta"),
              claim(cid="T2:c/delta", places=("T2:c/delta", "T6:c/delta"))]
    record = PlanRecord(budget=25, power=0.9, alpha=0.01, considered=3,
                        claims=("T5:a/delta", "T6:c/delta"))
    found = standings(claims, record)
    got = found.claims
    assert found.coverage.startswith("2 of 3 claims planned at power 0.9 for 25 GPU-h")
    assert got["T5:a/delta"].planned is True and got["T5:b/delta"].planned is False
    assert got["T2:c/delta"].planned is True  # the plan named another place of it
    assert got["T5:a/delta"].power == power_at(claims[0], 26, 0.01)
    assert all(s.planned is None for s in standings(claims).claims.values())
    assert standings(claims).coverage == ""
