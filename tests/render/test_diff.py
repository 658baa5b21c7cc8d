"""dfil.render.direction and the diff report: the directions of the paper's effects
(signed cells and declared contrasts), hand-computed on the demo table of test_render."""

from __future__ import annotations

import pytest
from test_render import RENDER, SPEC, frame, grid_with_render

from dfil.errors import ConfigError
from dfil.render import check_specs
from dfil.render.diff import html_report, markdown
from dfil.render.direction import direction, direction_rows, direction_summary
from dfil.render.resolve import Resolver
from dfil.render.source import Source


def test_direction_with_tolerance():
    assert [direction(x) for x in (1.0, -0.6, 0.49, -0.1, None)] == ["+", "-", "0", "0", None]
    assert direction(0.3, tol=0.1) == "+" and direction(float("nan")) is None


def _table(dfil, ft, effects):
    spec = {"demo": {**SPEC["demo"], "effects": effects}}
    check_specs(spec)
    vals = {}
    for s, (a, b) in enumerate(zip(dfil, ft, strict=True), start=1):
        vals[(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc")] = a
        vals[(f"frog/b/finetune/lamna/nfull/na/seed{s}", "test.main.acc")] = b
    return Resolver(spec, Source(grid_with_render(RENDER), frame(vals))).table("demo")


def test_signed_cells_and_declared_effects_keep_or_lose_the_paper_direction():
    spec_rows = SPEC["demo"]["rows"]
    assert spec_rows[0]["paper"] == {"dfil": "50.0±1.0", "d": 1.5}
    # the paper: d = +1.5 (DFIL above fine-tune); declared: DFIL 50.0 vs the missing
    # row's DFIL (no published number there: refused below), so compare r/dfil with r/d
    effects = [{"label": "dfil minus delta", "a": "r/dfil", "b": "r/d"}]
    up = _table((0.50, 0.52, 0.51), (0.48, 0.49, 0.47), effects)   # DFIL 51.0, FT 48.0
    rows = direction_rows([up])
    assert [(r["effect"], r["paper"], r["reproduced"], r["same_direction"]) for r in rows] == [
        ("Row: d", 1.5, pytest.approx(3.0), "yes"),  # the row label, the column id (no template)
        ("dfil minus delta", 48.5, pytest.approx(48.0), "yes")]
    down = _table((0.47, 0.48, 0.49), (0.50, 0.51, 0.52), effects)  # DFIL 48.0, FT 51.0
    rows = direction_rows([down])
    assert [r["same_direction"] for r in rows] == ["no", "yes"]
    assert (rows[0]["paper_dir"], rows[0]["reproduced_dir"]) == ("+", "-")
    assert direction_summary(rows) == {"T99 demo": {"yes": 1, "no": 1, "n/a": 0,
                                                    "not run": 0}}
    md = markdown([], "h", rows)
    assert "2 effects the paper reports" in md and "| T99 demo | 1 of 2 in the paper" in md
    assert '<tr class="no">' in html_report([], "h", rows)


def test_effects_of_rows_without_runs_are_not_run():
    none = _table((), (), [{"label": "e", "a": "r/dfil", "b": "r/d"}])
    rows = direction_rows([none])
    assert [r["same_direction"] for r in rows] == ["not run", "not run"]
    assert rows[1]["paper"] == 48.5  # published numbers survive the dropped row


def test_effects_must_name_published_cells():
    with pytest.raises(ConfigError, match=r"effects\[0\]\.b: 'r/ft' is not a row/column"):
        check_specs({"t": {**SPEC["demo"], "effects": [{"label": "x", "a": "r/dfil",
                                                        "b": "r/ft"}]}})
    with pytest.raises(ConfigError, match=r"effects\[0\]\.label: required but missing"):
        check_specs({"t": {**SPEC["demo"], "effects": [{"a": "r/dfil", "b": "r/d"}]}})
    for bad, why in (("0.5", "expected a number, got '0.5'"), (-1, "must be >= 0, got -1"),
                     (True, "expected a number, got True")):
        with pytest.raises(ConfigError, match=rf"effects\[0\]\.tol: {why}$"):
            check_specs({"t": {**SPEC["demo"], "effects": [
                {"label": "x", "a": "r/dfil", "b": "r/d", "tol": bad}]}})
    check_specs({"t": {**SPEC["demo"], "effects": [
        {"label": "x", "a": "r/dfil", "b": "r/d", "tol": 0.5}]}})
