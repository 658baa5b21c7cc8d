"""A failed cell in a table: its entries print no number, and the table's notes say why
in the words of dfil.contracts.failure (gated, non-finite loss, ...), from the aggregate's
``failed.<reason>`` row."""

from __future__ import annotations

import pytest
from test_render import RENDER, SPEC, SPECS, frame, grid_with_render

from dfil.contracts.failure import GATED, REASONS, failure_words
from dfil.render.build import render_one
from dfil.render.resolve import Resolver
from dfil.render.source import Source
from dfil.results.aggregate import failed_metric, failure_reason

DFIL = "frog/b/dfil/lam0.5/nfull/qure/seed{}"
FT = "frog/b/finetune/lamna/nfull/na/seed{}"


def values(failed_reason: str) -> dict:
    """Three seeds of fine-tune finished; dfil's seed 2 failed by ``failed_reason``."""
    vals = {(FT.format(s), "test.main.acc"): 0.5 for s in (1, 2, 3)}
    vals.update({(DFIL.format(s), "test.main.acc"): 0.5 for s in (1, 3)})
    vals[(DFIL.format(2), failed_metric(failed_reason))] = 1.0
    return vals


def test_every_reason_has_words_and_round_trips_through_the_aggregate_metric():
    assert failure_words("gated") == GATED == "not run: gated (needs HF_TOKEN and the licence)"
    assert failure_words("non-finite loss") == "not run: non-finite loss"
    for reason in REASONS:
        assert failure_words(reason).startswith("not run: ")
        assert failure_reason(failed_metric(reason)) == reason
    assert failure_reason("failed") == "error"  # an aggregate written before reasons
    assert failure_reason("test.main.acc") is None


@pytest.mark.parametrize("reason", ["gated", "non-finite loss"])
def test_a_failed_cells_entries_say_why_in_the_tables_notes(reason):
    grid = grid_with_render(RENDER)
    source = Source(grid, frame(values(reason)))
    sample = source.sample({"task": "frog", "backbone": "b", "method": "dfil", "lam": 0.5,
                            "seeds": "three", "metric": "test.main.acc"})
    assert sample.failed == failure_words(reason) and sample.values.empty
    table = Resolver(SPEC, source).table("demo")
    dfil, d, p = (table.entry("r", c) for c in ("dfil", "d", "p"))
    assert dfil.reason == failure_words(reason) and not dfil.values
    assert d.reason == p.reason == failure_words(reason)  # they read the failed cell
    tex = render_one({**SPECS, "scaling": SPEC["demo"]}, Source(grid, frame(values(reason))),
                     "scaling", ["cfg.yaml"], "runs")
    note = next(line for line in tex.splitlines() if "---" in line and "not run" in line)
    assert failure_words(reason).replace("_", r"\_") in note
    assert "not computable" not in note  # the delta says why too


def test_a_row_whose_cells_all_failed_is_named_with_the_reason():
    grid = grid_with_render(RENDER)
    vals = {(key.format(s), failed_metric("gated")): 1.0 for key in (DFIL, FT) for s in (1, 2, 3)}
    table = Resolver(SPEC, Source(grid, frame(vals))).table("demo")
    assert f"Row Row: {GATED}." in table.notes
