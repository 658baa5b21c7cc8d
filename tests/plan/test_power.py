"""Seeds a side for a claim's declared test at a stated power: the paper's spread (its
printed d_z where it prints one), the family's Bonferroni level, and the verdict's test
(dfil.stats.power), against statsmodels by hand."""

import math

import pytest
from statsmodels.stats.power import TTestIndPower, TTestPower

from dfil import stats
from dfil.plan.claims import PaperClaim, Side
from dfil.plan.power import MAX_SEEDS, family_sizes, power_at, seeds_needed, trial_of


def claim(design="welch", effect=0.8, stds=(1.0, 1.0), margin=None, dz=None, n=3,
          headline=True, why_not=""):
    sides = tuple(Side(None, s, n, ("frog/x",)) for s in stds)
    return PaperClaim("T5:a/delta", 5, "a", effect, design, margin, sides, headline,
                      why_not, dz=dz)


def test_the_trial_is_the_declared_test_on_the_papers_spread():
    # Welch's: Cohen's d on the root mean square of the two stds
    assert trial_of(claim(stds=(3.0, 4.0))) == stats.Trial("welch", math.sqrt(12.5))
    # paired: the differences' sd with no correlation assumed, or |Δ| / d_z where printed
    assert trial_of(claim("paired", stds=(3.0, 4.0))) == stats.Trial("paired", 5.0)
    assert trial_of(claim("paired", 5.9, (9.2, 3.5), dz=0.63)).sd == pytest.approx(5.9 / 0.63)
    assert trial_of(claim("one-sample", stds=(2.0,))) == stats.Trial("one-sample", 2.0)
    assert trial_of(claim(margin=0.5)).margin == 0.5
    assert trial_of(claim(stds=(None, 1.0))) is None


@pytest.mark.parametrize(("c", "alpha", "by_hand"), [
    # d = 0.8, two-sided 0.05 counted in the paper's direction: TTestIndPower one-sided
    # at 0.025 -> 25.5, so 26 a side (Cohen 1988, Table 2.4.1)
    (claim(), 0.05, TTestIndPower().solve_power(0.8, None, 0.025, 0.8, alternative="larger")),
    # d = 1.2 at a family of 10's Bonferroni level 0.005
    (claim(effect=1.2), 0.005, TTestIndPower().solve_power(1.2, None, 0.0025, 0.8,
                                                           alternative="larger")),
    # paired, d_z = 0.5 / sqrt(0.5 + 0.5) = 0.5
    (claim("paired", 0.5, (math.sqrt(0.5), math.sqrt(0.5))), 0.05,
     TTestPower().solve_power(0.5, None, 0.025, 0.8, alternative="larger")),
])
def test_seeds_needed_is_statsmodels_rounded_up(c, alpha, by_hand):
    need = seeds_needed(c, alpha)
    assert need.seeds == math.ceil(by_hand) and need.method == "analytic"
    assert need.power == pytest.approx(power_at(c, need.seeds, alpha)) and need.power >= 0.8


def test_a_claim_beyond_any_budget_says_how_many_seeds_it_needs():
    # d = 0.5: TTestIndPower gives 63.8 a side, more than MAX_SEEDS
    need = seeds_needed(claim(effect=0.5))
    assert need.seeds is None and MAX_SEEDS < 64
    assert need.message == "needs 64 seeds a side: not plannable"


def test_spread_unknown_is_planned_at_three_seeds():
    need = seeds_needed(claim(effect=5.0, stds=(None, 2.0)))
    assert (need.seeds, need.method) == (3, "spread unknown")


def test_a_parity_is_planned_by_tost_power_and_not_past_its_margin():
    need = seeds_needed(claim(effect=0.0, stds=(0.2, 0.2), margin=0.5))
    n = stats.n_for_power(stats.Trial("welch", 0.2, 0.5), 0.0, 0.05, 0.8)
    assert need.seeds == n and need.power >= 0.8
    assert seeds_needed(claim(effect=0.6, margin=0.5)).seeds is None
    assert seeds_needed(claim(effect=0.0, stds=(0.0, 0.0), margin=0.5)).seeds == 2


def test_family_sizes_count_the_claims_that_can_carry_a_p():
    claims = [claim(), claim(headline=False), claim(why_not="the grid has no cell for it"),
              claim(headline=False)]
    assert family_sizes(claims) == {"primary": 1, "exploratory": 2}


def test_bad_power_or_alpha_is_refused():
    with pytest.raises(ValueError, match="alpha and power"):
        seeds_needed(claim(), power=1.0)
