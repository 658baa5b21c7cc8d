"""Claims that hold by construction: declared with why, reported as such and counted apart
from reproduced (no test, no Holm family); the paper's comparison of such a quantity with
another method measured on the same items as a claim of its own; the ablation's contrasts
declared at every backbone size the table prints."""

from pathlib import Path

import pytest
from claim_tables import DFIL, FT, stat, two_rows

from dfil.claims import VERDICTS, judge, verdict_counts
from dfil.claims.construction import BY_CONSTRUCTION
from dfil.claims.declare import declare
from dfil.render import load_specs
from dfil.render.entries import Entry, Row, Table
from dfil.render.table_spec import check_specs
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
WHY = "Theorem 1: nearest-center labels never violate order on a grid"


def _mono(mf_grid: Entry, mf_pairs: Entry, ft: Entry) -> Table:
    """T23's shape: the MF path on the grid (0 by Theorem 1) and on the test pairs."""
    rows = [Row("dfil_mf", "MF", entries={"rate": mf_grid}),
            Row("ft", "FT", entries={"rate": ft}),
            Row("dfil_mf_pairs", "MF labels", entries={"rate": mf_pairs})]
    effects = [{"label": "ft vs MF", "a": "ft/rate", "b": "dfil_mf/rate", "construction": WHY},
               {"label": "ft vs MF (same pairs)", "a": "ft/rate", "b": "dfil_mf_pairs/rate",
                "paper_b": "dfil_mf/rate"}]
    return Table("mono_detail", 23, "tab:mono", "Mono", ["rate"], rows, effects=effects,
                 published={("dfil_mf", "rate"): 0.10, ("ft", "rate"): 10.6})


def test_a_by_construction_claim_is_reported_as_such_and_counted_apart():
    grid = stat(0.0, 0.0, 0.0, cell=DFIL, metric="grid.1000.nearest_center_rate")
    pairs = stat(14.0, 12.0, 18.0, cell=DFIL, metric="test.mf.mono_rate")
    ft = stat(15.0, 14.5, 15.5, cell=FT, metric="test.main.mono_rate")
    built, same = judge([_mono(grid, pairs, ft)])
    assert built["verdict"] == BY_CONSTRUCTION and built["p"] is None \
        and built["p_holm"] is None
    assert built["reason"] == (f"holds by construction ({WHY}); measured +15 (paper +10.5); "
                               "no test, counted apart from reproduced")
    # the same comparison on the same items: the paper's direction (+10.5), tested
    assert same["paper"] == pytest.approx(10.5) and same["p"] is not None
    assert same["estimate"] == pytest.approx(15.0 - 44.0 / 3)
    assert same["verdict"] != BY_CONSTRUCTION
    # counted apart: a verdict word of its own, every page counts it
    assert BY_CONSTRUCTION in VERDICTS
    assert verdict_counts([built, same])[BY_CONSTRUCTION] == 1
    assert verdict_counts([built, same])["reproduced"] == 0


def test_a_by_construction_claim_against_the_papers_direction_says_so():
    grid = stat(2.0, 3.0, 2.5, cell=DFIL, metric="grid.1000.nearest_center_rate")
    ft = stat(1.0, 1.0, 1.5, cell=FT, metric="test.main.mono_rate")
    built, _ = judge([_mono(grid, stat(), ft)])
    assert built["verdict"] == BY_CONSTRUCTION and built["p_holm"] is None
    assert built["reason"] == (f"holds by construction ({WHY}); measured -1.33 (paper "
                               "+10.5), not the paper's direction on these runs; no test, "
                               "counted apart from reproduced")


def test_a_by_construction_place_never_merges_with_a_tested_one():
    a, b = stat(44.0, 45.0, 47.0, cell=DFIL), stat(40.0, 40.5, 41.0, cell=FT)
    tested = two_rows(a, b, 45.0, 40.0, number=2)
    built = two_rows(a, b, 45.0, 40.0, number=9)
    built.effects = [{**built.effects[0], "construction": WHY}]
    rows = judge([tested, built])
    assert [r["verdict"] for r in rows] == ["reproduced", BY_CONSTRUCTION]


def test_the_paper_tables_declare_construction_same_items_and_every_ablation_size():
    specs = load_specs(ROOT / "config/tables.yaml")
    effects = {t: {e["label"]: e for e in specs[t]["effects"]}
               for t in ("entailment", "mono_detail", "ablation", "ablation_detail")}
    assert effects["entailment"]["DFIL MF path vs its classifier"]["construction"]
    assert effects["mono_detail"]["pairwise violations: fine-tune vs DFIL MF path"][
        "construction"]
    same = effects["mono_detail"]["pairwise violations: fine-tune vs DFIL MF path (same "
                                  "FRoG-Hard pairs)"]
    assert same["paper_b"] == "dfil_mf/rate" and "construction" not in same
    # every contrast of Table 6 at both sizes it prints, and Table 25's ranking at 1.5B
    sizes = {label.rsplit("(", 1)[1].rstrip(")") for label in effects["ablation"]}
    assert sizes == {"7B", "1.5B"}
    for label in [x for x in effects["ablation"] if x.endswith("(7B)")]:
        assert label.replace("(7B)", "(1.5B)") in effects["ablation"]
    assert len(effects["ablation_detail"]) == 3


def test_a_paper_side_must_name_a_published_number(tmp_path):
    specs = load_specs(ROOT / "config/tables.yaml")
    bad = {**specs["mono_detail"], "effects": [
        {"label": "x", "a": "ft/rate", "b": "dfil_mf_pairs/rate", "paper_b": "dfil_mf/magnitude"}]}
    with pytest.raises(ConfigError, match=r"effects\[0\]\.paper_b"):
        check_specs({**specs, "mono_detail": bad}, "tables.yaml")
    unpublished = {**specs["mono_detail"], "effects": [
        {"label": "x", "a": "ft/rate", "b": "dfil_mf_pairs/rate"}]}
    with pytest.raises(ConfigError, match=r"effects\[0\]\.b"):
        check_specs({**specs, "mono_detail": unpublished}, "tables.yaml")


def test_a_declared_claim_takes_the_papers_value_from_its_paper_side():
    t = _mono(stat(0.0, cell=DFIL), stat(1.0, cell=DFIL), stat(2.0, cell=FT))
    built, same = declare(t)
    assert built.construction == WHY and same.construction == ""
    assert built.paper == same.paper == pytest.approx(10.5)
    assert same.entries == (("ft", "rate"), ("dfil_mf_pairs", "rate"))
