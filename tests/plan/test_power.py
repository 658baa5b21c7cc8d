"""Seeds a side for a stated power: Cohen's tables by hand, and the closed forms against a
seeded simulation of the tests themselves."""

import math

import pytest

from dfil.plan.power import (
    MAX_SEEDS,
    Trial,
    analytic_power,
    seeds_needed,
    simulated_power,
)


@pytest.mark.parametrize(("test", "effect", "sds", "seeds"), [
    # Cohen (1988) Table 2.4.1: d = 0.8, two-sided alpha 0.05, power 0.8 -> 26 a group
    ("welch", 0.8, (1.0, 1.0), 26),
    # the differences' std is sqrt(0.5 + 0.5) = 1 with no correlation: d_z = 0.5 -> 34
    ("paired", 0.5, (math.sqrt(0.5), math.sqrt(0.5)), 34),
    ("one_sample", 0.5, (1.0,), 34),
    # a large effect: the least a t-test takes... plus one (d = 4: power 0.52 at n = 2)
    ("welch", 4.0, (1.0, 1.0), 3),
])
def test_seeds_needed_matches_cohens_tables(test, effect, sds, seeds):
    need = seeds_needed(test, effect, sds)
    assert need.seeds == seeds and need.method == "analytic" and need.power >= 0.8


def test_a_claim_beyond_any_budget_says_how_many_seeds_it_needs():
    # Cohen: d = 0.5 needs 64 a group, more than MAX_SEEDS
    need = seeds_needed("welch", 0.5, (1.0, 1.0))
    assert need.seeds is None and MAX_SEEDS < 64
    assert need.message == "needs 64 seeds a side: not plannable"


def test_spread_unknown_is_planned_at_three_seeds():
    need = seeds_needed("welch", 5.0, (None, 2.0))
    assert (need.seeds, need.method) == (3, "spread unknown")


def test_no_spread_at_all_is_settled_by_two_seeds():
    assert seeds_needed("tost", 0.0, (0.0, 0.0), margin=0.5).seeds == 2
    assert seeds_needed("welch", 44.0, (0.0, 0.0)).seeds == 2


def test_a_parity_past_its_margin_or_a_zero_effect_is_not_plannable():
    assert seeds_needed("tost", 0.6, (1.0, 1.0), margin=0.5).seeds is None
    assert seeds_needed("welch", 0.0, (1.0, 1.0)).seeds is None


@pytest.mark.parametrize(("test", "n", "effect", "sds"), [
    ("welch", 10, 5.9, (6.0, 6.0)),
    ("welch", 8, 2.0, (1.5, 1.5)),
    ("paired", 8, 2.0, (2.0, 2.0)),
    ("one_sample", 6, 1.0, (1.2,)),
])
@pytest.mark.slow
def test_analytic_and_simulated_power_agree(test, n, effect, sds):
    trial = Trial(test, effect, sds)
    analytic = analytic_power(trial, n, 0.05)
    simulated = simulated_power(trial, n, 0.05, sims=2000, seed=1)
    # 2000 draws: a standard error of at most 0.011; Welch's df below Student's costs a
    # little power at small n
    assert abs(analytic - simulated) < 0.04, (analytic, simulated)


@pytest.mark.slow
def test_tost_is_simulated_and_its_power_rises_with_seeds():
    trial = Trial("tost", 0.0, (0.2, 0.2), margin=0.5)
    assert analytic_power(trial, 5, 0.05) is None
    low, high = (simulated_power(trial, n, 0.05, sims=400) for n in (3, 12))
    assert low < high and high > 0.9
    need = seeds_needed("tost", 0.0, (0.2, 0.2), margin=0.5)
    assert need.method == "simulated" and need.seeds is not None and need.power >= 0.8


def test_bad_power_or_alpha_is_refused():
    with pytest.raises(ValueError, match="alpha and power"):
        seeds_needed("welch", 1.0, (1.0, 1.0), power=1.0)
