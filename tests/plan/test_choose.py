"""The exact choice of claims: hand-checked plans, shared runs paid once, never over the
budget."""

import pytest

from dfil.plan.choose import Option, choose

HOURS = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 2.5, "x": 1.0, "y": 1.0}


def test_shared_runs_are_paid_once():
    # A and B share run b: both cost 3 h together; C alone costs 2.5 h
    options = [Option("A", frozenset("ab")), Option("B", frozenset("bc")),
               Option("C", frozenset("d"))]
    assert choose(options, HOURS, 3.0) == {"A", "B"}
    assert choose(options, HOURS, 2.9) == {"A"} or choose(options, HOURS, 2.9) == {"B"}


def test_not_greedy():
    # cheapest first takes D (0.9 h) and then nothing fits; the optimum takes E and F
    hours = {"p": 0.9, "q": 0.55, "r": 0.55}
    options = [Option("D", frozenset("p")), Option("E", frozenset("q")),
               Option("F", frozenset("r"))]
    assert choose(options, hours, 1.1) == {"E", "F"}


def test_headline_claims_break_ties():
    options = [Option("Y", frozenset("y")), Option("X", frozenset("x"), headline=True)]
    assert choose(options, HOURS, 1.0) == {"X"}


def test_budget_zero_plans_nothing_and_a_negative_one_is_refused():
    assert choose([Option("A", frozenset("a"))], HOURS, 0.0) == frozenset()
    with pytest.raises(ValueError, match="non-negative"):
        choose([], HOURS, -1.0)
