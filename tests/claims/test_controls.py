"""Positive controls: the verdict rule, the families and claims.csv's control column."""

from types import SimpleNamespace

import pytest

from dfil.claims import COLUMNS, control_result, with_controls
from dfil.claims.controls import (
    attribution,
    cell_coordinates,
    claim_family,
    control_words,
    covers,
    metric_family,
)


def _spec(direction="greater", threshold=0.1, metric="test.main.acc", family="ordinal",
          ceiling=None):
    return SimpleNamespace(family=family, metric=metric, direction=direction,
                           threshold=threshold, ceiling=ceiling)


@pytest.mark.parametrize("metric, family", [
    ("compositional.from_text.self.all", "compositional"),
    ("naturalistic.from_text", "compositional"), ("csmc.mf.consistency", "monotonicity"),
    ("test.main.mono_rate", "monotonicity"), ("grid.1000.nearest_center", "monotonicity"),
    ("p_mae", "monotonicity"), ("test.main.acc", "ordinal"), ("qure.mf.acc", "ordinal"),
    ("test.main.per_class_acc.3", "ordinal"), ("mf.widths.0", ""), ("params.trainable", "")])
def test_metric_family(metric, family):
    assert metric_family(metric) == family


def test_claim_family_takes_the_first_metric_with_a_family():
    assert claim_family(["mf.centers.1", "csmc.mf.consistency", "test.main.acc"]) == \
        "monotonicity"
    assert claim_family(["params.trainable"]) == ""


def test_control_result_passes_when_every_seed_clears_the_threshold():
    # diffs: 0.95-0.80 = 0.15, 0.90-0.78 = 0.12; worst 0.12 >= 0.1
    r = control_result("ord", _spec(), [(0.95, 0.80), (0.90, 0.78)])
    assert r["outcome"] == "passed" and r["n"] == 2
    assert r["control_mean"] == pytest.approx(0.925)
    assert r["reference_mean"] == pytest.approx(0.79)
    assert r["difference"] == pytest.approx(0.135)
    assert r["worst"] == pytest.approx(0.12)


def test_control_result_fails_on_one_seed_below_the_threshold():
    # diffs 0.15 and 0.05: the mean 0.10 would clear 0.1, the worst seed does not
    r = control_result("ord", _spec(), [(0.95, 0.80), (0.85, 0.80)])
    assert r["outcome"] == "failed" and r["worst"] == pytest.approx(0.05)
    assert "does not hold" in r["reason"]


def test_control_result_less_direction():
    # p_mae 0.02 vs 0.20: -0.18, i.e. +0.18 the declared way >= 0.05
    spec = _spec("less", 0.05, "p_mae", "monotonicity")
    assert control_result("m", spec, [(0.02, 0.20)])["outcome"] == "passed"
    # a control whose error rises fails
    assert control_result("m", spec, [(0.25, 0.20)])["outcome"] == "failed"
    assert control_result("m", spec, [(0.17, 0.20)])["outcome"] == "failed"  # 0.03 < 0.05


def test_control_result_not_run_without_a_pair():
    r = control_result("c", _spec(), [(None, 0.8), (0.9, None)])
    assert r["outcome"] == "not run" and r["n"] == 0 and r["difference"] is None
    assert "2 declared" in r["reason"]


def test_control_words():
    r = control_result("ord", _spec(), [(0.95, 0.80)])
    assert control_words(r) == ("passed: ord test.main.acc control 0.95 vs reference 0.8 "
                                "(mean +0.15, worst seed +0.15, n 1; declared control - "
                                "reference >= +0.1 on every seed)")


FROG = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
ORD = "ordinal_standin/tiny-llama/dfil/lam0.5/nfull/uniform/seed42"


def _row(claim, family, verdict, reason="r", keys=(FROG, ORD)):
    return {c: None for c in COLUMNS} | {"claim": claim, "claim_family": family,
                                         "verdict": verdict, "reason": reason, "control": "",
                                         "run_keys": keys}


def test_with_controls_fills_the_column_and_attributes_only_contradicted_claims():
    cells = ["frog/tiny-llama/dfil", "ordinal_standin/tiny-llama/dfil"]
    passed = control_result("comp", _spec(family="compositional"), [(0.9, 0.5)], "", cells)
    failed = control_result("ord", _spec(), [(0.5, 0.5)], "", cells)
    rows = [_row("T3:a", "compositional", "contradicted"),
            _row("T3:b", "compositional", "reproduced"),
            _row("T5:c", "ordinal", "inconclusive"),
            _row("T9:d", "", "contradicted")]
    out = with_controls(rows, [passed, failed], standin=True)
    assert list(out[0]) == list(rows[0])  # the row's keys, in order
    assert out[0]["control"].startswith("passed: comp ")
    assert out[0]["reason"] == ("r; its family's positive control passed: attributed to the "
                                "stand-in, not the code")
    assert out[1]["reason"] == "r"  # reproduced: nothing to attribute
    assert out[2]["control"].startswith("failed: ord ")
    assert out[2]["reason"] == "r"  # inconclusive: no effect went missing, none attributed
    reversed_ = with_controls([_row("T5:c", "ordinal", "contradicted")], [failed], True)
    assert reversed_[0]["reason"].endswith("this flags the code, not the stand-in")
    assert out[3]["control"] == "" and out[3]["reason"] == "r"


def test_attribution_words():
    ran = [{"outcome": "passed"}]
    assert attribution(ran, False).endswith("attributed to this grid's model and data, "
                                            "not the code")
    assert attribution([{"outcome": "not run"}], True).endswith("nothing attributes it")
    assert "flags the code" in attribution([*ran, {"outcome": "failed"}], True)


def test_claims_csv_columns_end_with_the_claim_family_and_control():
    assert COLUMNS[-2:] == ["claim_family", "control"]


def test_control_result_names_the_runs_it_compared():
    r = control_result("c", _spec(), [(0.9, 0.7)], "a/seed1 vs b/seed1")
    assert r["runs"] == "a/seed1 vs b/seed1" and r["outcome"] == "passed"  # +0.2 >= 0.1


def test_control_result_with_a_ceiling_fails_a_seed_short_of_it():
    # differences +0.45, +0.40, +0.35 all clear 0.1; the controls 0.97, 0.96, 0.94
    spec = _spec(metric="compositional.from_text.self.all", family="compositional",
                 ceiling=0.95)
    r = control_result("comp", spec, [(0.97, 0.52), (0.96, 0.56), (0.94, 0.59)])
    assert r["outcome"] == "failed" and r["worst_control"] == pytest.approx(0.94)
    assert r["worst"] == pytest.approx(0.35)
    assert r["reason"] == ("worst seed +0.35 of 3, worst control value 0.94 (ceiling 0.95): "
                           "the declared effect does not hold")
    assert r["declared"].endswith("control - reference >= +0.1 and control >= 0.95 on "
                                  "every seed")
    ok = control_result("comp", spec, [(0.97, 0.52), (0.96, 0.56), (0.95, 0.59)])
    assert ok["outcome"] == "passed" and ok["control_mean"] == pytest.approx(0.96)


def test_a_less_ceiling_is_a_bound_from_above():
    spec = _spec(direction="less", threshold=0.05, metric="p_mae", family="monotonicity",
                 ceiling=0.02)
    assert control_result("m", spec, [(0.01, 0.2), (0.02, 0.2)])["outcome"] == "passed"
    assert control_result("m", spec, [(0.01, 0.2), (0.03, 0.2)])["outcome"] == "failed"


def test_cell_coordinates_drop_the_variant_and_the_rest_of_the_key():
    assert cell_coordinates("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed123") == \
        "frog/tiny-llama/dfil"


def test_a_control_covers_only_claims_over_its_reference_cells():
    r = control_result("comp", _spec(family="compositional"), [(0.9, 0.5)], "",
                       ["frog/tiny-llama/dfil", "frog/tiny-llama/dfil"])
    assert r["cells"] == ("frog/tiny-llama/dfil",)
    dfil = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
    assert covers(r, [dfil, "frog/tiny-llama/dfil+fewshot/lam0.5/n16/qure/seed42"])
    assert not covers(r, [dfil, "frog/tiny-llama/finetune/lam0.5/nfull/na/seed42"])
    assert not covers(r, ["frog/tiny-llama/ft_compose/lam0.5/nfull/qure/seed42",
                          "frog/tiny-llama/finetune/lam0.5/nfull/na/seed42"])
    assert not covers(r, [])


def test_a_control_is_not_cited_for_a_claim_over_other_cells():
    """The ordinal control (ordinal stand-in) is never cited for a FRoG claim, nor the
    compositional control (DFIL only) for FT+Compose against fine-tune."""
    ordinal = control_result("ord", _spec(), [(0.99, 0.8)] * 3, "",
                             ["ordinal_standin/tiny-llama/dfil"])
    comp = control_result("comp", _spec(family="compositional"), [(0.99, 0.5)] * 3, "",
                          ["frog/tiny-llama/dfil"])
    ft = ("frog/tiny-llama/ft_compose/lam0.5/nfull/qure/seed42",
          "frog/tiny-llama/finetune/lam0.5/nfull/na/seed42")
    rows = [_row("T2:frog", "ordinal", "contradicted", keys=(FROG,)),
            _row("T5:ord", "ordinal", "contradicted", keys=(ORD,)),
            _row("T3:ftc", "compositional", "contradicted", keys=ft),
            _row("T3:dfil", "compositional", "contradicted", keys=(FROG,))]
    out = with_controls(rows, [ordinal, comp], standin=True)
    assert out[0]["control"] == "" and out[0]["reason"] == "r"
    assert out[1]["control"].startswith("passed: ord ") and "attributed to" in out[1]["reason"]
    assert out[2]["control"] == "" and out[2]["reason"] == "r"
    assert out[3]["control"].startswith("passed: comp ")
