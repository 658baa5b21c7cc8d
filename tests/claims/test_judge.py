"""dfil.claims.judge: one row per distinct claim, every declared claim in exactly one row
(the paper grid's 73 included), the same words and counts as the index."""

import csv
from collections import Counter
from pathlib import Path

import pytest
from claim_tables import DFIL, FT, stat, two_rows

from dfil.claims import COLUMNS, declare, judge, merge, verdict_counts
from dfil.claims.judge import declared_claims, numbers_claims
from dfil.config.grid import load_grid_files
from dfil.plan.claims import _Shapes
from dfil.render import load_specs, table_names
from dfil.render.resolve import Resolver

ROOT = Path(__file__).resolve().parents[2]


def _pair():
    return stat(44.0, 45.0, 47.0, cell=DFIL), stat(40.0, 40.5, 41.0, cell=FT)


def test_claims_with_the_same_sides_are_judged_once_with_every_place():
    a, b = _pair()
    main, appendix = two_rows(a, b, 45.0, 40.0, number=2), two_rows(a, b, 46.0, 40.0, number=26)
    rows = judge([main, appendix])
    assert len(rows) == 1
    [r] = rows
    assert r["claim"] == "T2:dfil-vs-fine-tune" and r["family"] == "primary"
    assert r["places"] == ("T2:dfil-vs-fine-tune DFIL vs fine-tune (paper +5); "
                           "T26:dfil-vs-fine-tune DFIL vs fine-tune (paper +6)")
    assert r["sides"].startswith(f"a: {DFIL} [test.main.acc] | b: {FT}")
    assert set(r) == set(COLUMNS) and r["verdict"] == "reproduced"
    # the opposite direction, or a side that ran nowhere, is another claim
    assert len(judge([main, two_rows(a, b, 40.0, 45.0, number=9)])) == 2
    empty = two_rows(stat(), stat(), 45.0, 40.0, number=3)
    assert len(merge(declared_claims([empty, two_rows(stat(), stat(), 45.0, 40.0)]))) == 2


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


def test_numbers_name_their_claims_and_a_claims_own_number_carries_its_verdict():
    a, b = _pair()
    t = two_rows(a, b, 45.0, 40.0)
    rows = judge([t])
    found = numbers_claims([t], rows)
    assert found[(5, "dfil", "acc")] == (["T5:dfil-vs-fine-tune"], None)


def test_the_index_counts_are_claims_csv_counts(tmp_path):
    from dfil.report import site

    a, b = _pair()
    tables = [two_rows(a, b, 45.0, 40.0, number=2), two_rows(a, b, 46.0, 40.0, number=26),
              two_rows(stat(cell="x"), b, 45.0, 40.0, number=9)]
    context = {"title": "DFIL reproduction", "grid": "unit", "standin": "tiny", "commit": "",
               "figures": {}, "failures": {}}
    out = site.write_site(tables, {}, context, tmp_path / "runs", tmp_path / "o")
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
    assert len(rows) < 84  # T5 and T26 print the same contrasts: one row each
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
