"""dfil.claims.judge: one row per distinct claim, every declared claim in exactly one row
(the paper grid's 84 places included), the same words and counts as the index."""

import csv
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from claim_tables import DFIL, FT, stat, two_rows
from scipy import stats as sps

from dfil.claims import COLUMNS, declare, judge, merge, verdict_counts
from dfil.claims.judge import declared_claims, numbers_claims
from dfil.config.grid import load_grid_files
from dfil.plan.claims import _Shapes
from dfil.render import load_specs, table_names
from dfil.render.resolve import Resolver

ROOT = Path(__file__).resolve().parents[2]


def _pair():
    return stat(44.0, 45.0, 47.0, cell=DFIL), stat(40.0, 40.5, 41.0, cell=FT)


def _again(table, place="T2:dfil-vs-fine-tune"):
    """``table`` (:func:`two_rows`) with its effect declared a place of ``place``'s claim."""
    table.effects[0]["same_as"] = place
    return table


def test_a_place_declared_the_same_claim_is_judged_once_with_every_place():
    a, b = _pair()
    main = two_rows(a, b, 45.0, 40.0, number=2)
    appendix = _again(two_rows(a, b, 46.0, 40.0, number=26))
    rows = judge([main, appendix])
    assert len(rows) == 1
    [r] = rows
    assert r["claim"] == "T2:dfil-vs-fine-tune" and r["family"] == "primary"
    assert r["places"] == ("T2:dfil-vs-fine-tune DFIL vs fine-tune (paper +5); "
                           "T26:dfil-vs-fine-tune DFIL vs fine-tune (paper +6)")
    assert r["sides"].startswith(f"a: {DFIL} [test.main.acc] | b: {FT}")
    assert set(r) == {*COLUMNS, "run_keys"} and r["verdict"] == "reproduced"
    # the same sides undeclared are two places of two claims: the runs never merge them
    assert len(judge([main, two_rows(a, b, 46.0, 40.0, number=26)])) == 2


def test_declared_places_are_one_claim_whatever_ran():
    """Sides that read nothing (no run on this grid) still merge as declared: a grid
    counts the same claims before and after its runs."""
    empty = two_rows(stat(), stat(), 45.0, 40.0, number=3)
    [claim] = merge(declared_claims([empty, _again(two_rows(stat(), stat(), 46.0, 40.0),
                                                   "T3:dfil-vs-fine-tune")]))
    assert [p.id for p in claim.places] == ["T3:dfil-vs-fine-tune", "T5:dfil-vs-fine-tune"]
    # a chain of declarations ends at one claim
    chained = _again(two_rows(stat(), stat(), 47.0, 40.0, number=26), "T5:dfil-vs-fine-tune")
    [claim] = merge(declared_claims([empty, _again(two_rows(stat(), stat(), 46.0, 40.0),
                                                   "T3:dfil-vs-fine-tune"), chained]))
    assert len(claim.places) == 3 and claim.id == "T3:dfil-vs-fine-tune"


def test_a_wrong_declaration_is_an_error_naming_it():
    main = two_rows(stat(), stat(), 45.0, 40.0, number=2)
    with pytest.raises(ValueError, match=r"T26:dfil-vs-fine-tune same_as 'T9:x' names no "):
        merge(declared_claims([main, _again(two_rows(stat(), stat(), 45.0, 40.0, number=26),
                                            "T9:x")]))
    # the opposite direction cannot be the same claim
    with pytest.raises(ValueError, match=r"different tests: T2:dfil-vs-fine-tune \(paper 5"):
        merge(declared_claims([main, _again(two_rows(stat(), stat(), 40.0, 45.0, number=26))]))


def test_a_claim_against_the_data_is_contradicted_and_a_weak_one_inconclusive():
    a, b = _pair()
    assert judge([two_rows(a, b, 40.0, 45.0, number=9)])[0]["verdict"] == "contradicted"
    noisy = stat(40.0, 47.0, 41.0, cell=DFIL), stat(43.0, 40.5, 44.0, cell=FT, seeds=(4, 5, 6))
    [r] = judge([two_rows(*noisy, 45.0, 40.0)])
    assert r["verdict"] == "inconclusive" and "cannot detect an effect smaller than" in \
        r["reason"] and r["mde"] > 5 and r["test"].startswith("Welch's t")


def test_holm_adjusts_within_the_family_and_the_verdict_uses_it():
    a, b = _pair()
    other = stat(44.0, 45.0, 46.5, cell=DFIL + "x"), stat(40.0, 40.5, 41.0, cell=FT + "x")
    rows = judge([two_rows(a, b, 45.0, 40.0, number=2), two_rows(*other, 45.0, 40.0, number=3)])
    ps = sorted(r["p"] for r in rows)
    assert sorted(r["p_holm"] for r in rows) == pytest.approx([min(1, 2 * ps[0]),
                                                               max(2 * ps[0], ps[1])])
    # the MDE is at the family's Bonferroni level 0.05 / 2, on the differences' sd
    from statsmodels.stats.power import TTestPower

    d = np.array([4.0, 4.5, 6.0])
    assert rows[0]["mde"] == pytest.approx(d.std(ddof=1) * TTestPower().solve_power(
        None, nobs=3, alpha=0.0125, power=0.8, alternative="larger"), rel=1e-6)


def _family_tables():
    """Five claims over two families: two primary (Tables 2 and 3), three exploratory
    (Tables 9, 10, 11; one degenerate, counted in no family), with the paper's sign
    either way."""
    def pair(cell, a, b, seeds_b=None):
        return (stat(*a, cell=DFIL + cell), stat(*b, cell=FT + cell, seeds=seeds_b))

    return [two_rows(*pair("p1", (44.0, 45.0, 47.0), (40.0, 40.5, 41.0)), 45.0, 40.0, number=2),
            two_rows(*pair("p2", (41.0, 43.0, 40.0), (40.0, 40.5, 41.0)), 45.0, 40.0, number=3),
            two_rows(*pair("e1", (44.0, 45.0, 46.5), (40.0, 40.5, 41.0), (4, 5, 6)), 40.0, 45.0,
                     number=9),
            two_rows(*pair("e2", (30.0, 31.0, 33.0), (30.5, 31.0, 32.0)), 45.0, 40.0,
                     number=10),
            two_rows(*pair("e3", (3.0, 3.0, 3.0), (1.0, 1.0, 1.0)), 45.0, 40.0, number=11)]


def test_multipletests_over_claims_csvs_own_rows_gives_its_p_holm(tmp_path):
    """One p per claim, adjusted once: Holm (statsmodels) over the p column of each
    family's counted rows of claims.csv reproduces its p_holm column exactly."""
    from statsmodels.stats.multitest import multipletests

    from dfil.report import site

    context = {"title": "DFIL reproduction", "grid": "unit", "standin": "", "commit": "",
               "figures": {}, "failures": {}}
    out = site.write_pages(_family_tables(), {}, context, tmp_path / "runs", tmp_path / "o")
    rows = list(csv.DictReader(out["claims.csv"].open()))
    assert len(rows) == 5
    for family in ("primary", "exploratory"):
        counted = [r for r in rows if r["family"] == family and r["p_holm"]]
        ps = [float(r["p"]) for r in counted]
        assert [float(r["p_holm"]) for r in counted] == pytest.approx(
            list(multipletests(ps, method="holm")[1]), rel=1e-9)
    assert [len([r for r in rows if r["family"] == f and r["p_holm"]])
            for f in ("primary", "exploratory")] == [2, 2]
    # the degenerate claim counts in no family; the others carry one two-sided p each
    verdicts = {r["claim"].split(":")[0]: r["verdict"] for r in rows}
    assert verdicts == {"T2": "reproduced", "T3": "inconclusive", "T9": "contradicted",
                        "T10": "inconclusive", "T11": "not comparable"}
    t9 = next(r for r in rows if r["claim"].startswith("T9"))
    assert float(t9["p"]) == pytest.approx(sps.ttest_ind([44.0, 45.0, 46.5], [40.0, 40.5, 41.0],
                                                         equal_var=False).pvalue)


def test_numbers_name_their_claims_and_a_claims_own_number_carries_its_verdict():
    a, b = _pair()
    t = two_rows(a, b, 45.0, 40.0)
    rows = judge([t])
    found = numbers_claims([t], rows)
    assert found[(5, "dfil", "acc")] == (["T5:dfil-vs-fine-tune"], None)


def test_the_index_counts_are_claims_csv_counts(tmp_path):
    from dfil.report import site

    a, b = _pair()
    tables = [two_rows(a, b, 45.0, 40.0, number=2), _again(two_rows(a, b, 46.0, 40.0, number=26)),
              two_rows(stat(cell="x"), b, 45.0, 40.0, number=9)]
    context = {"title": "DFIL reproduction", "grid": "unit", "standin": "tiny", "commit": "",
               "figures": {}, "failures": {}}
    out = site.write_pages(tables, {}, context, tmp_path / "runs", tmp_path / "o")
    claims = list(csv.DictReader(out["claims.csv"].open()))
    index = out["index.html"].read_text()
    assert len(claims) == 2
    assert "Verdicts on the paper's 2 distinct claims" in index
    for verdict, n in verdict_counts(claims).items():
        assert f"{verdict}: {n}</span>" in index
    assert "A stand-in grid can establish" in index
    numbers = list(csv.DictReader(out["numbers.csv"].open()))
    words = {"reproduced", "contradicted", "inconclusive", "not comparable", "not run"}
    assert {r["verdict"] for r in numbers} <= words
    assert {r["verdict"] for r in claims} <= words
    diff = out["diff.md"].read_text()
    assert "Verdicts on the paper's 2 distinct claims: reproduced 1" in diff


@pytest.fixture(scope="module")
def paper_tables():
    grid = load_grid_files([ROOT / "config/paper.yaml"])
    specs = load_specs(ROOT / "config/tables.yaml")
    resolver = Resolver(specs, _Shapes(grid))
    return [resolver.table(n) for n in table_names(specs)]


def test_no_claim_of_the_paper_is_dropped(paper_tables):
    """Every one of the 84 claims the tables declare maps to exactly one claims.csv row."""
    declared = [d for t in paper_tables for d in declare(t)]
    assert len(declared) == len({d.id for d in declared}) == 84
    rows = judge(paper_tables)
    places = Counter(p.split(" ", 1)[0] for r in rows for p in r["places"].split("; "))
    assert set(places) == {d.id for d in declared} and set(places.values()) == {1}
    assert len(rows) == 67  # T26 prints T5's contrasts again, and more: one row each
    assert {r["claim"] for r in rows} <= {d.id for d in declared}


def test_a_claim_whose_side_failed_says_why_in_the_failures_words():
    from dataclasses import replace

    from dfil.contracts.failure import GATED

    failed = replace(stat(cell=FT), values=(), seeds=(), reason=GATED)
    row = judge([two_rows(stat(44.0, 45.0, 46.0, cell=DFIL), failed, 41.0, 40.0)])[0]
    assert row["verdict"] == "not run"
    assert row["reason"] == f"the grid has no run for one side: {GATED}"


def test_the_planner_reads_claims_csvs_claims_by_their_ids(paper_tables):
    """One id scheme: ``dfil grid plan``'s claims are claims.csv's rows, in order, each
    with the ids of every place it is printed at."""
    from dfil.plan.claims import ran_claims

    specs = load_specs(ROOT / "config/tables.yaml")
    planned = ran_claims(paper_tables, specs)
    rows = judge(paper_tables)
    assert [c.id for c in planned] == [r["claim"] for r in rows]
    assert [" ".join(c.places) for c in planned] == [
        " ".join(p.split(" ", 1)[0] for p in r["places"].split("; ")) for r in rows]
