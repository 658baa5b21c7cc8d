"""One rule each for degenerate and at-chance evidence, on hand-made runs: a paired claim
is judged on its per-seed differences (a side's zero variance hides nothing), constant
differences or a side predicting one class make it no evidence, and a side at or below
its set's chance or majority-class rate is "not comparable: at chance"."""

from dataclasses import replace

import numpy as np
import pytest
from claim_tables import DFIL, FT, stat, two_rows

from dfil.claims import judge
from dfil.claims.declare import declare
from dfil.claims.degenerate import at_chance, chance_rates, check, no_evidence
from dfil.claims.evidence import evaluate
from dfil.render.voiding import sides_degenerate

COMPOSE = "frog/smollm2-135m/ft_compose/lam0.5/nfull/uniform"
ZERO_VAR = "zero variance across 3 seeds (every seed 8)"


def test_a_zero_variance_side_does_not_hide_a_paired_design_whose_differences_vary():
    # the uniform-init contrast: FT+Compose 8.0 on every seed, DFIL 2.2, 0.9, 2.2
    dfil = stat(2.2, 0.9, 2.2, cell=DFIL, metric="compositional.from_text.self.all")
    compose = replace(stat(8.0, 8.0, 8.0, cell=COMPOSE,
                           metric="compositional.from_text.self.all"), degenerate=ZERO_VAR)
    assert sides_degenerate((dfil, compose)) == ""  # the Δ entry is no degenerate mark
    [d] = declare(two_rows(dfil, compose, 41.6, 18.4, number=8))
    ev = evaluate(d)
    assert d.design == "paired" and ev.degenerate == ""
    assert ev.estimate == pytest.approx(np.mean([-5.8, -7.1, -5.8]))
    # t = -6.2333 / (0.75056 / sqrt 3) = -14.38 on 2 df, against the paper's +23.2
    [row] = judge([two_rows(dfil, compose, 41.6, 18.4, number=8)])
    assert row["verdict"] == "contradicted" and "degenerate" not in row["reason"]


def test_constant_differences_or_one_class_make_a_paired_claim_no_evidence():
    a, b = stat(5.0, 6.0, 7.0, cell=DFIL), stat(3.0, 4.0, 5.0, cell=FT)
    assert sides_degenerate((a, b)) == "every seed gives the same difference"
    [row] = judge([two_rows(a, b, 45.0, 40.0)])
    assert row["verdict"] == "not comparable" and row["p_holm"] is None
    assert row["reason"] == "degenerate (every seed gives the same difference)"
    assert row["mde"] is None  # no MDE of 0 on a row with no spread
    one = replace(stat(5.0, 9.0, 6.0, cell=DFIL),
                  degenerate="one class for all 40 items in 1 of 3 runs; " + ZERO_VAR)
    [row] = judge([two_rows(one, b, 45.0, 40.0)])
    assert row["reason"] == "degenerate (a: one class for all 40 items in 1 of 3 runs)"


def test_both_sides_constant_on_other_seeds_is_degenerate_for_welch():
    a = stat(3.0, 3.0, cell=DFIL)
    b = stat(1.0, 1.0, cell=FT, seeds=(7, 8))
    [row] = judge([two_rows(a, b, 45.0, 40.0)])
    assert row["verdict"] == "not comparable" and row["mde"] is None


def lookup_of(values: dict):
    return lambda key, metric: values.get((key, metric))


def test_chance_rates_name_the_set_and_which_rates_apply():
    assert chance_rates("test.mf.acc") == ("test", ("majority", "chance"))
    assert chance_rates("compositional.from_text.self.all") == ("compositional", ("chance",))
    assert chance_rates("compositional.text_only.qure.all") == ("compositional",
                                                                ("majority", "chance"))
    assert chance_rates("naturalistic.from_text") == ("naturalistic", ("majority", "chance"))
    assert chance_rates("ipr.text.linguistic.exact") == ("ipr", ("chance",))
    # no accuracy against gold labels: per-class recall, consistency, violations, oracle
    for metric in ("test.main.per_class_acc.3", "csmc.mf.consistency", "test.main.mono_rate",
                   "compositional.oracle.qure.all", "ipr.text.off_by_one"):
        assert chance_rates(metric) is None


def test_a_side_at_or_below_chance_or_majority_is_marked_at_chance():
    keys = [f"{DFIL}/seed{s}" for s in (1, 2)]
    values = {(keys[0], "test.main.acc"): 0.18, (keys[1], "test.main.acc"): 0.20}
    for k in keys:
        values[(k, "baseline.test.majority")] = 0.25
        values[(k, "baseline.test.chance")] = 0.125
    reads = frozenset((k, "test.main.acc") for k in keys)
    # mean 19% is above chance 12.5% but below the majority class's 25%
    assert at_chance(reads, lookup_of(values)) == \
        "at chance: mean 19% ≤ majority-class rate 25% on the test set"
    values[(keys[1], "test.main.acc")] = 0.40
    assert at_chance(reads, lookup_of(values)) == ""
    # self-consistent compositional accuracy: chance only (its labels are the model's own)
    comp = {(k, "compositional.from_text.self.all"): v for k, v in zip(keys, (0.08, 0.082),
                                                                         strict=True)}
    comp.update({(k, "baseline.compositional.chance"): 0.125 for k in keys})
    comp_reads = frozenset((k, "compositional.from_text.self.all") for k in keys)
    assert check([8.0, 8.2], comp_reads, lookup_of(comp)) == \
        "at chance: mean 8.1% ≤ chance 12.5% on the compositional set"
    # runs without their set's baselines say nothing
    assert at_chance(comp_reads, lookup_of({k: v for k, v in comp.items()
                                            if "baseline" not in k[1]})) == ""


def test_a_claim_with_a_side_at_chance_is_not_comparable_and_never_counted():
    at = "at chance: mean 8.1% ≤ chance 12.5% on the compositional set"
    dfil = stat(12.0, 14.0, 12.0, cell=DFIL)
    compose = replace(stat(8.0, 8.5, 7.9, cell=COMPOSE), degenerate=at)
    clean = two_rows(stat(30.0, 33.0, 31.0, cell=DFIL + "x"), stat(20.0, 21.0, 22.0, cell=FT),
                     40.0, 30.0, number=6)
    rows = judge([two_rows(dfil, compose, 31.2, 25.4, number=2), clean])
    assert rows[0]["verdict"] == "not comparable" and rows[0]["p_holm"] is None
    assert rows[0]["reason"] == ("at chance (b: mean 8.1% ≤ chance 12.5% on the "
                                 "compositional set)")
    assert rows[1]["p_holm"] == pytest.approx(rows[1]["p"])  # alone in its family
    assert no_evidence("a: one class for all 9 items in 1 of 3 runs; b: " + at) == (
        "degenerate (a: one class for all 9 items in 1 of 3 runs; b: " + at + ")")


def test_an_inconclusive_row_with_an_opposite_estimate_says_so_with_its_interval():
    from dfil.claims.evidence import Evidence
    from dfil.claims.verdict import decide, opposite_words

    # T29's CSMC contrast: -38.0 [-55.9, -20.1] against the paper's +3.5
    ev = Evidence("Welch's t, two-sided", 3, 3, -38.0, -55.9, -20.1, p=0.006)
    could = "this grid cannot detect an effect smaller than 16.6 points"
    verdict, reason = decide(3.5, ev, 0.06, could)
    assert verdict == "inconclusive"
    assert ("the estimate is opposite the paper's (+3.5): -38 [-55.9, -20.1], its interval "
            "excludes 0; this grid cannot detect") in reason
    # an interval across 0 says the sign only; the paper's direction says nothing
    across = Evidence("t", 3, 3, -1.0, -4.0, 2.0, p=0.7)
    assert opposite_words(2.0, across) == "the estimate is opposite the paper's (+2): -1 " \
        "[-4, +2]; "
    assert opposite_words(-2.0, across) == ""


def test_a_caption_counts_only_pairs_that_are_evidence():
    from dfil.render.entries import Entry, Row, Table
    from dfil.render.resolve import _At, _wins

    def row(rid, mf, ft, why=""):
        return Row(rid, rid, entries={"mf": replace(stat(mf, mf + 1.0, cell=DFIL),
                                                    degenerate=why),
                                      "ft": stat(ft, ft + 3.0, cell=FT)})

    one = "one class for all 500 items in 3 of 3 runs"
    table = Table("crosstask_full", 19, "tab:x", "", ["mf", "ft"],
                  [row("a", 50.0, 40.0), row("b", 50.0, 45.0, why=one),
                   row("c", 30.0, 45.0, why="zero variance across 2 seeds (every seed 30)")])
    at = _At({}, table, Row("f", "f"))
    spec = {"wins": [["a", "mf"], ["b", "mf"], ["c", "mf"]], "against": "ft"}
    # b predicts one class: left out; c's zero variance is no reason (its mean stands)
    assert _wins({**spec, "show": "k"}, at).value == 1
    assert _wins({**spec, "show": "n"}, at).value == 2
    assert isinstance(_wins({**spec, "show": "p"}, at), Entry)
