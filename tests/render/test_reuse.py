"""dfil.render.reuse: one run never fills two settings of one table."""

from __future__ import annotations

import pytest
from tests.render.test_render import frame, grid_with_render

from dfil.render.entries import Entry, Row
from dfil.render.resolve import Resolver
from dfil.render.reuse import reason, reused
from dfil.render.source import Source

LAM = ("lambdas", "0.1", "0.5")
B15, B7 = ("backbones", "qwen2.5-1.5b", "b"), ("backbones", "qwen2.5-7b", "b")
READS = frozenset({("frog/b/dfil/lam0.5/nfull/qure/seed1", "test.main.acc")})


def stat(subs=(), reads=READS) -> Entry:
    return Entry("stat", values=(0.5,), reads=reads, substituted=frozenset(subs))


def test_the_entry_the_grid_really_ran_keeps_the_run():
    rows = [Row("acc", "Acc", entries={"l0.1": stat([B7, LAM]), "l0.5": stat([B7])})]
    assert reused(rows) == {("acc", "l0.1"):
                            "the grid ran λ=0.5 only; λ=0.1 would reuse that run"}


def test_among_stand_ins_the_first_in_table_order_keeps_the_run():
    other = frozenset({("frog/b/finetune/lamna/nfull/na/seed1", "test.main.acc")})
    rows = [Row("dfil", "DFIL", entries={"b1_5": stat([B15]), "b7": stat([B7])}),
            Row("ft", "FT", entries={"b1_5": stat([B15], other), "b7": stat([B7], other)})]
    why = "the grid ran b (shown as qwen2.5-1.5b) only; qwen2.5-7b would reuse that run"
    assert reused(rows) == {("dfil", "b7"): why, ("ft", "b7"): why}


def test_another_metric_of_the_same_runs_is_the_same_runs():
    mono = frozenset((k, "grid.1000.nearest_center") for k, _ in READS)
    rows = [Row("dfil", "D", entries={"b1_5": stat([B15]), "mono": stat([B7], mono)})]
    assert set(reused(rows)) == {("dfil", "mono")}


def test_same_setting_twice_and_entries_that_read_many_cells_stay():
    many = READS | {("frog/b/finetune/lamna/nfull/na/seed1", "test.main.acc")}
    rows = [Row("a", "A", entries={"x": stat([B7]), "y": stat([B7])}),
            Row("b", "B", entries={"x": stat([B15], many), "y": stat([B7], many)})]
    assert reused(rows) == {}


def test_seed_sets_replicate_a_setting_they_do_not_tell_two_apart():
    """T24: the per-seed row and the 3-seed mean of a one-seed grid read the one run
    through different seed sets; that is one setting (the caption's Ran as says the
    seeds), while a λ stand-in among them is still another setting."""
    three, twenty = ("seed_sets", "three", "one"), ("seed_sets", "twenty", "one")
    rows = [Row("s42", "42", entries={"x": stat([B7])}),
            Row("mean", "mean", entries={"x": stat([B7, three])}),
            Row("self", "self", entries={"x": stat([B7, twenty])}),
            Row("l01", "λ 0.1", entries={"x": stat([B7, three, LAM])})]
    assert reused(rows) == {("l01", "x"):
                            "the grid ran λ=0.5 only; λ=0.1 would reuse that run"}


def test_reason_names_every_coordinate_that_differs():
    assert reason(frozenset(), frozenset({LAM})) == \
        "the grid ran λ=0.5 only; λ=0.1 would reuse that run"


SWEEP = {"sweep": {
    "number": 98, "label": "tab:sweep", "caption": "Sweep.",
    "where": {"task": "frog", "backbone": "qwen2.5-7b", "method": "dfil", "budget": "full",
              "init": "qure", "seeds": "three", "scale": 100, "metric": "test.main.acc"},
    "columns": [{"id": "l0.1", "lam": 0.1}, {"id": "l0.5", "lam": 0.5},
                {"id": "l1", "lam": 1.0}, {"id": "d", "delta": ["l0.1", "l0.5"]}],
    "rows": [{"id": "acc", "label": "Acc", "paper": {"l0.1": 50.4, "l0.5": 51.2}}],
}}


def test_a_resolved_table_prints_the_stand_in_as_a_dash_with_its_reason():
    grid = grid_with_render({"standin": "s", "backbones": {"qwen2.5-7b": "b"},
                             "lambdas": {"0.1": 0.5}})
    vals = {(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc"): v
            for s, v in zip((1, 2, 3), (0.50, 0.52, 0.51), strict=True)}
    table = Resolver(SWEEP, Source(grid, frame(vals))).table("sweep")
    kept, gone = table.entry("acc", "l0.5"), table.entry("acc", "l0.1")
    assert kept.mean == pytest.approx(51.0) and len(kept.reads) == 3
    assert gone.mean is None and gone.render() == "---" and not gone.reads
    assert gone.published == 50.4
    assert table.entry("acc", "d").mean is None  # computed from the dash: a dash too
    assert ("lambdas", "0.1", "0.5") not in table.substituted
    assert table.notes == ["— : not run: the grid ran λ=0.5 only; λ=0.1 would reuse that "
                           "run; not run: the grid has no run of that setting; not "
                           "computable from the runs this grid has."]


def test_a_row_whose_every_entry_is_a_stand_in_is_left_out_with_its_reason():
    spec = {"t": {**SWEEP["sweep"], "columns": [{"id": "x"}],
                  "rows": [{"id": "l05", "label": "0.5", "lam": 0.5},
                           {"id": "l01", "label": "0.1", "lam": 0.1}]}}
    grid = grid_with_render({"standin": "s", "backbones": {"qwen2.5-7b": "b"},
                             "lambdas": {"0.1": 0.5}})
    vals = {("frog/b/dfil/lam0.5/nfull/qure/seed1", "test.main.acc"): 0.5}
    table = Resolver(spec, Source(grid, frame(vals))).table("t")
    assert [r.id for r in table.rows] == ["l05"]
    assert table.notes == ["Row 0.1: not run: the grid ran λ=0.5 only; λ=0.1 would "
                           "reuse that run."]
