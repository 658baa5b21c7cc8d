"""The audit's severity rule (dfil.audit.severity), case by case."""

import pytest

from dfil.audit import severity as sv


@pytest.mark.parametrize("kind, printed, recomputed, expected", [
    ("binomial", 0.035, 0.0703, True),     # significant as printed, not two-sided
    ("ttest", 0.011, 0.014, False),        # both below 0.05
    ("paired_dz", 0.2, 0.04, True),        # not significant as printed, significant here
    ("ttest", 0.05, 0.049, True),          # p = 0.05 is not below 0.05
    ("arithmetic", 5.9, -1.6, True),       # a Δ that changes sign
    ("arithmetic", 7.8, -1.6, True),
    ("arithmetic", 6.0, 5.0, False),
    ("arithmetic", 0.0, -3.0, False),      # 0 is neither side
    ("arithmetic", None, 1.0, False),      # words, not a number
    ("range", 16.5, None, False),          # no single recomputed value
])
def test_flips(kind, printed, recomputed, expected):
    assert sv.flips(kind, printed, recomputed) is expected


@pytest.mark.parametrize("verdict_class, stakes, flipped, expected", [
    ("inconsistent", "headline", True, "critical"),
    ("inconsistent", "headline", False, "major"),
    ("conditional", "headline", True, "major"),
    ("conditional", "headline", False, "minor"),
    ("inconsistent", "result", False, "major"),
    ("inconsistent", "result", True, "major"),      # flips matter for headlines only
    ("conditional", "result", False, "minor"),
    ("inconsistent", "presentation", True, "minor"),
    ("conditional", "presentation", False, "minor"),
    ("consistent", "headline", True, None),
    ("not-recomputable", "result", False, None),
])
def test_severity_table(verdict_class, stakes, flipped, expected):
    assert sv.severity(verdict_class, stakes, flipped) == expected


def test_severity_rejects_unknown_stakes():
    with pytest.raises(ValueError, match="stakes 'huge' is not one of"):
        sv.severity("inconsistent", "huge", False)


def test_ranked_and_counts():
    items = [("a", "minor"), ("b", None), ("c", "critical"), ("d", "minor"), ("e", "major")]
    ranked = sv.ranked(items, lambda x: x[1])
    assert [x[0] for x in ranked] == ["c", "e", "a", "d"]  # stable within a level
    assert sv.counts(x[1] for x in items) == {"critical": 1, "major": 1, "minor": 2}
