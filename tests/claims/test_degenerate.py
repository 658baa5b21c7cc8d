"""Degenerate evidence: the per-run facts kept of predictions.parquet, the three checks
with hand-computed reasons, and a claim resting on them judged not comparable and left
out of Holm."""


import numpy as np
import pandas as pd
import pytest
from claim_tables import DFIL, FT, stat, two_rows

from dfil.claims import judge
from dfil.claims.declare import declare
from dfil.claims.degenerate import check, identical, measured_on, one_class, zero_variance
from dfil.claims.evidence import evaluate
from dfil.contracts.metrics import write_metrics
from dfil.contracts.predcheck import expected
from dfil.contracts.predictions import (
    COLUMNS,
    baselines,
    digest,
    majority_chance,
    prediction_facts,
)
from dfil.render.entries import Entry
from dfil.results.aggregate import aggregate
from records import metrics_record


def frame(sets: dict) -> pd.DataFrame:
    """A predictions table: set -> (gold, main labels, mf labels), ids 0..n-1."""
    parts = []
    for name, (gold, main, mf) in sets.items():
        n = len(main)
        parts.append(pd.DataFrame({"set": name, "id": range(n), "gold": gold,
                                   "p_true": np.nan, "p_hat": np.nan, "main_label": main,
                                   "mf_label": mf, "ensemble_label": [-1] * n}))
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def test_prediction_facts_hand_computed():
    f = frame({"test": ([0, 1, 1, 3], [2, 2, 2, 2], [0, 1, 2, 1])})
    facts = prediction_facts(f, best_path="mf")
    assert facts["pred.test.main.n"] == 4 and facts["pred.test.main.classes"] == 1
    assert facts["pred.test.mf.classes"] == 3
    assert facts["pred.test.best.digest"] == facts["pred.test.mf.digest"] == digest([0, 1, 2, 1])
    assert "pred.test.ensemble.n" not in facts  # all -1: the path was not predicted
    # rows in another order are the same predictions (sorted by id)
    assert prediction_facts(f.iloc[::-1])["pred.test.mf.digest"] == digest([0, 1, 2, 1])
    assert digest([0, 1, 2, 1]) != digest([0, 1, 2, 2]) and digest([1]) < 2 ** 53


def test_majority_and_chance_hand_computed():
    assert majority_chance(np.array([0, 0, 1, 2]), 4) == (0.5, 0.25)
    # T15's FRoG-hard counts: the majority class's share
    assert majority_chance(np.repeat([0, 1, 2], [2, 5, 3]), 8) == (0.5, 0.125)
    with pytest.raises(ValueError, match=r"0\.\.3"):
        majority_chance(np.array([0, 4]), 4)
    both = baselines(frame({"test": ([0, 0, 0, 1], [0] * 4, [0] * 4),
                            "csmc_a": ([-1, -1], [1, 2], [1, 2])}), 8)
    assert both == {"baseline.test.majority": 0.75, "baseline.test.chance": 0.125}


def test_the_aggregate_keeps_the_facts_of_each_run(tmp_path):
    runs = tmp_path / "runs"
    d = runs / "frog/tiny/dfil/lam0.5/nfull/qure/seed42"
    d.mkdir(parents=True)
    predictions = frame({"test": ([0, 1, 1, 0], [1, 1, 1, 1], [0, 1, 1, 1])})
    predictions.to_parquet(d / "predictions.parquet")
    record = metrics_record(best_path="mf")  # its numbers as the predictions determine them
    write_metrics(d / "metrics.json", {**record, **expected(record, predictions)})
    rows = aggregate([d / "metrics.json"], runs).set_index("metric")["value"]
    assert rows["pred.test.main.classes"] == 1 and rows["pred.test.best.classes"] == 2
    # data.counts.test has 2 classes in the record: chance is 1/2, majority 2/4
    assert rows["baseline.test.majority"] == 0.5 and rows["baseline.test.chance"] == 0.5


def test_measured_on_names_the_set_and_path():
    assert measured_on("test.mf.acc") == [("test", "mf")]
    assert measured_on("csmc.main.by_domain.finance") == [("csmc_a", "main"), ("csmc_b", "main")]
    assert measured_on("entailment.labels_mf") == [("entailment_a", "mf"),
                                                   ("entailment_b", "mf")]
    assert measured_on("compositional.from_text.self.all") == [("compositional", "main")]
    assert measured_on("compositional.oracle.qure.all") == []  # true proportions
    assert measured_on("params.trainable") == measured_on("grid.1000.nearest_center_rate") == []


def lookup_of(facts: dict):
    return lambda key, metric: facts.get((key, metric))


def runs_facts(classes, digests, n=500, at="pred.test.main"):
    out = {}
    for s, (c, g) in enumerate(zip(classes, digests, strict=True), start=1):
        key = f"{DFIL}/seed{s}"
        out.update({(key, f"{at}.n"): float(n), (key, f"{at}.classes"): float(c),
                    (key, f"{at}.digest"): float(g)})
    return out


READS = frozenset((f"{DFIL}/seed{s}", "test.main.acc") for s in (1, 2, 3))


def test_one_class_in_every_run():
    facts = runs_facts([1, 1, 1], [7, 7, 7])
    assert check([0.2, 0.2, 0.2], READS, lookup_of(facts)) == (
        "one class for all 500 items in 3 of 3 runs; identical predictions on all 500 "
        "items across 3 seeds")


def test_one_class_in_one_run_and_identical_runs():
    assert one_class([("k1", 500, 1, 7), ("k2", 500, 4, 8)]) == \
        "one class for all 500 items in 1 of 2 runs"
    assert identical([("k1", 500, 4, 9), ("k2", 500, 4, 9), ("k3", 500, 4, 9)]) == \
        "identical predictions on all 500 items across 3 seeds"
    assert identical([("k1", 500, 4, 9)]) == ""  # one run replicates nothing either way
    facts = runs_facts([5, 5, 5], [3, 3, 3])
    assert check([0.804] * 3, READS, lookup_of(facts)) == \
        "identical predictions on all 500 items across 3 seeds"


def test_zero_variance_only_where_predictions_differ():
    facts = runs_facts([5, 6, 5], [1, 2, 3])
    assert check([0.5, 0.5, 0.5], READS, lookup_of(facts)) == \
        "zero variance across 3 seeds (every seed 0.5)"
    assert check([0.5, 0.6, 0.5], READS, lookup_of(facts)) == ""
    assert zero_variance([0.4]) == ""
    # a metric measured on no predictions is never degenerate (parameter counts)
    params = frozenset((k, "params.trainable") for k, _ in READS)
    assert check([10.0, 10.0, 10.0], params, lookup_of(facts)) == ""


def test_a_claim_on_degenerate_runs_is_not_comparable_and_out_of_holm():
    why = "one class for all 500 items in 3 of 3 runs"
    bad = stat(25.0, 21.0, 29.0, cell=DFIL)
    bad = Entry(**{**bad.__dict__, "degenerate": why})
    good = stat(20.0, 21.0, 22.0, cell=FT)
    table = two_rows(bad, good, 40.0, 30.0)
    ev = evaluate(declare(table)[0])
    assert ev.degenerate == f"degenerate (a: {why})"
    clean = two_rows(stat(30.0, 33.0, 31.0, cell=DFIL.replace("dfil", "coral")), good,
                     40.0, 30.0, number=6)
    rows = judge([table, clean])
    assert [r["verdict"] for r in rows] == ["not comparable", "reproduced"]
    assert rows[0]["reason"] == f"degenerate (a: {why})" and rows[0]["p_holm"] is None
    # both are primary claims; counted, the degenerate one (the larger p) would double
    # the clean one's p under Holm: left out, the clean p_holm is its own p
    assert rows[0]["p"] > rows[1]["p"]
    assert rows[1]["p_holm"] == pytest.approx(rows[1]["p"])
