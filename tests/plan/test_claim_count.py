"""One count of the paper's claims: the index, claims.csv and ``dfil grid plan`` give
the same number on the paper grid and on the smoke grid, whether no run exists or every
run does, and each place the paper prints a claim again is a place of that one claim."""

import csv
import re
from pathlib import Path

import pytest

from dfil.claims import judge, merge
from dfil.claims.judge import declared_claims
from dfil.config.grid import load_grid_files
from dfil.cost.archs import ARCHS
from dfil.plan import coordinate_hours, format_plan, make_plan, paper_claims, seed_order
from dfil.plan.claims import _Shapes
from dfil.plan.power import MAX_SEEDS
from dfil.render import load_specs, table_names
from dfil.render.build import resolve_tables
from dfil.render.resolve import Resolver
from dfil.report import site

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

#: 84 places: 5 of T26 repeat T5 and 1 more (7B); T3's QuRe Δ vs FT+Compose and T24's
#: mean contrast; T2's compositional effect with T3, T4 and T8 (3 more); T2's uniform
#: effect with T4 and T8 (2); T2's CSMC effect with T7 (1); T10's Δ with its effect (1);
#: T12's Δ with T17's at N = 16, 32, 64 (3): 84 - 6 - 1 - 3 - 2 - 1 - 1 - 3 = 67.
CLAIMS = 67

#: Places the paper prints again, each with the place whose claim it is.
SAME = {**{f"T26:{b}/delta": f"T5:{b}/delta" for b in (
            "qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b", "mistral-7b",
            "llama-3.1-8b")},
        "T24:compositional-from-text-dfil-vs-ft-compose-mean": "T3:qure_d_compose/from_text",
        **{f"T17:delta/n{n}": f"T12:delta/n{n}" for n in (16, 32, 64)}}


def _counts(grid_file: str, tmp_path: Path) -> dict[str, int]:
    grid = load_grid_files([ROOT / grid_file])
    specs = load_specs(ROOT / "config/tables.yaml")
    none = resolve_tables(specs, grid, None)  # no run exists
    every = Resolver(specs, _Shapes(grid))  # every run the grid names exists
    every = [every.table(n) for n in table_names(specs)]
    context = {"title": "t", "grid": grid.name, "standin": "", "commit": "", "figures": {},
               "failures": {}}
    out = site.write_pages(none, {}, context, tmp_path / "runs", tmp_path / "o")
    index = re.search(r"Verdicts on the paper's (\d+) distinct claims",
                      out["index.html"].read_text())
    claims = paper_claims(grid, specs)
    archs = {name: (b or {}).get("arch") or ARCHS[name]  # nothing fetched
             for name, b in grid.config["backbones"].items()}
    printed = format_plan(make_plan(claims, coordinate_hours(grid, archs),
                                    seed_order(grid.config, MAX_SEEDS), 0.0))
    planner = re.search(r"0 of (\d+) claims planned", printed)
    return {"index": int(index.group(1)),
            "claims.csv": len(list(csv.DictReader(out["claims.csv"].open()))),
            "claims.csv, every run": len(judge(every)), "dfil grid plan": int(planner.group(1))}


@pytest.mark.parametrize("grid_file", ["config/paper.yaml", "config/smoke.yaml"])
def test_the_index_claims_csv_and_the_planner_count_the_same_claims(grid_file, tmp_path):
    counts = _counts(grid_file, tmp_path)
    assert counts == dict.fromkeys(counts, CLAIMS), counts


@pytest.mark.parametrize("grid_file", ["config/paper.yaml", "config/smoke.yaml"])
def test_a_place_printed_again_is_a_place_of_its_one_claim(grid_file):
    grid = load_grid_files([ROOT / grid_file])
    specs = load_specs(ROOT / "config/tables.yaml")
    for tables in (resolve_tables(specs, grid, None),
                   [Resolver(specs, _Shapes(grid)).table(n) for n in table_names(specs)]):
        rows = judge(tables)
        of_place = {p.split(" ", 1)[0]: r["claim"] for r in rows
                    for p in r["places"].split("; ")}
        for again, first in SAME.items():
            assert of_place[again] == of_place[first] == first, (again, first)
        assert len(of_place) == 84


def test_the_declared_places_of_a_claim_read_the_same_runs_on_the_paper_grid():
    """On the paper's own grid, the places ``same_as:`` joins compare the same runs and
    metrics, and no two places that do are left apart (the declarations are complete)."""
    grid = load_grid_files([ROOT / "config/paper.yaml"])
    specs = load_specs(ROOT / "config/tables.yaml")
    resolver = Resolver(specs, _Shapes(grid))
    declared = declared_claims([resolver.table(n) for n in table_names(specs)])
    claim_of = {p.id: c.id for c in merge(declared) for p in c.places}
    by_reads: dict = {}
    for d in declared:
        if all(d.reads) and d.paper is not None:
            by_reads.setdefault((d.reads, d.test, d.sign), set()).add(claim_of[d.id])
    assert all(len(ids) == 1 for ids in by_reads.values())
    reads = {d.id: d.reads for d in declared}
    for d in declared:
        if d.same_as:
            assert reads[d.id] == reads[d.same_as] and all(reads[d.id]), d.id
