"""dfil.render: resolving declared tables, LaTeX output, spec checks, the PDF."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dfil.config.grid import Grid, load_grid_files
from dfil.config.runkey import parse_key
from dfil.render import check_specs, file_stem, load_specs, table_keys, table_names
from dfil.render.build import render_one, report, resolve_tables, spec_digest
from dfil.render.figure_spec import load_figures
from dfil.render.figures import FIGURES
from dfil.render.latex import Tex, environment, render_document
from dfil.render.pdf import compile_pdf
from dfil.render.resolve import Resolver
from dfil.render.source import Source
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SPECS = load_specs(ROOT / "config/tables.yaml")


def grid_with_render(render: dict | None = None) -> Grid:
    cfg = {"name": "t", "backbones": {"b": {"size": "cpu"}},
           "resources": {"cpu": {"mem_mb": 1, "runtime": 1}},
           "tasks": {"frog": {}}, "seed_sets": {"three": [1, 2, 3]},
           "groups": {"g": {"tasks": ["frog"], "backbones": ["b"],
                            "methods": ["dfil", "finetune"], "lambdas": [0.5],
                            "budgets": ["full"], "inits": ["qure"], "seeds": "three"}}}
    if render is not None:
        cfg["render"] = render
    return Grid(cfg)


def frame(values: dict[tuple[str, str], float], config_hash: str = "c0ffee") -> pd.DataFrame:
    return pd.DataFrame([{**parse_key(k), "metric": m, "value": v, "run_dir": k,
                          "config_hash": config_hash} for (k, m), v in values.items()])


SPEC = {"demo": {
    "number": 99, "label": "tab:demo", "caption": "Demo $x$.",
    "where": {"task": "frog", "backbone": "qwen2.5-7b", "budget": "full", "init": "qure",
              "lam": 0.5, "seeds": "three", "scale": 100, "metric": "test.main.acc"},
    "columns": [{"id": "dfil", "method": "dfil"}, {"id": "ft", "method": "finetune"},
                {"id": "d", "delta": ["dfil", "ft"]},
                {"id": "p", "test": "welch", "a": {"method": "dfil"},
                 "b": {"method": "finetune"}}],
    "rows": [{"id": "r", "label": "Row", "paper": {"dfil": "50.0±1.0", "d": 1.5}},
             {"id": "missing", "label": "Gone", "backbone": "qwen2.5-72b"}],
    "bold": [{"by": "row", "among": ["dfil", "ft"]}],
}}
RENDER = {"standin": "tiny_model", "backbones": {"qwen2.5-7b": "b"},
          "seed_sets": {"three": "three"}}


def test_resolve_hand_computed_cells():
    grid = grid_with_render(RENDER)
    vals = {}
    for s, (a, b) in zip((1, 2, 3), ((0.50, 0.48), (0.52, 0.49), (0.51, 0.47)), strict=True):
        vals[(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc")] = a
        vals[(f"frog/b/finetune/lamna/nfull/na/seed{s}", "test.main.acc")] = b
    table = Resolver(SPEC, Source(grid, frame(vals))).table("demo")
    dfil, ft, d = (table.entry("r", c) for c in ("dfil", "ft", "d"))
    assert dfil.mean == pytest.approx(51.0) and dfil.std == pytest.approx(1.0)
    assert dfil.render() == r"\textbf{51.0$\pm$1.0}" and not ft.bold
    assert d.render() == "+3.0"
    assert [e.values for e in d.sides] == [dfil.values, ft.values]  # its seeds test it
    from scipy import stats
    expected = stats.ttest_ind([50, 52, 51], [48, 49, 47], equal_var=False).pvalue
    assert table.entry("r", "p").mean == pytest.approx(expected)
    # the row with no runs is dropped and named; the substitution is recorded
    assert [r.id for r in table.rows] == ["r"]
    assert table.notes[0] == "Rows with no runs in this grid: Gone."  # its label, not its id
    assert ("backbones", "qwen2.5-7b", "b") in table.substituted
    assert len(table.keys) == 6


def test_a_reference_brings_its_tables_runs_and_substitutions_as_values():
    """A table that refers to another reads what that table reads, and says which
    stand-ins named them; the source answers the same however often it is asked."""
    grid = grid_with_render(RENDER)
    vals = {(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc"): v
            for s, v in zip((1, 2, 3), (0.50, 0.52, 0.51), strict=True)}
    source = Source(grid, frame(vals))
    where = {**SPEC["demo"]["where"], "method": "dfil"}
    first = source.select(where)
    assert first == source.select(where) and len(first.keys) == 3
    assert first.substituted == {("backbones", "qwen2.5-7b", "b")}
    specs = {**SPEC, "summary": {
        "number": 98, "label": "tab:s", "caption": "S.", "columns": [{"id": "x"}],
        "rows": [{"id": "r", "cells": {"x": {"ref": "demo/r/dfil", "fmt": "mean"}}}]}}
    resolver = Resolver(specs, source)
    summary = resolver.table("summary")
    assert summary.entry("r", "x").render() == "51.0" and not summary.entry("r", "x").bold
    assert summary.reads == resolver.table("demo").reads and len(summary.keys) == 6
    assert summary.substituted == {("backbones", "qwen2.5-7b", "b")}


def test_entry_kind_is_the_first_kind_key_an_entry_spec_holds():
    from dfil.render.resolve import entry_kind

    assert entry_kind({"metric": "test.main.acc"}) == "stat"
    assert entry_kind({"tex": "x", "with": {}}) == "tex"
    assert entry_kind({"test": "welch", "holm": "p"}) == "holm"
    assert entry_kind({"delta": ["a", "b"], "method": "dfil"}) == "delta"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_number_never_reaches_a_table(bad):
    key = "frog/b/dfil/lam0.5/nfull/qure/seed1"
    with pytest.raises(ValueError, match=f"{key}: metric test.main.acc is {bad}"):
        Source(grid_with_render(), frame({(key, "test.main.acc"): bad}))


def test_a_table_header_names_each_run_with_its_config_hash():
    """What ``dfil publish`` reads to tell a config edit from a table that lost entries."""
    key = "frog/b/dfil/lam0.5/nfull/qure/seed1"
    specs = {**SPECS, "scaling": SPEC["demo"]}
    tex = render_one(specs, Source(grid_with_render(RENDER),
                                   frame({(key, "test.main.acc"): 0.5})),
                     "scaling", ["cfg.yaml"], Path("runs"))
    lines = [line for line in tex.splitlines() if line.startswith("%   ")]
    assert f"%   {key}  config c0ffee" in lines
    assert "%   frog/b/dfil/lam0.5/nfull/qure/seed2  config none" in lines  # never ran
    assert f"% spec: {spec_digest(SPEC['demo'])}" in tex.splitlines()
    edited = {**SPEC["demo"], "caption": "Another caption."}
    assert len(spec_digest(edited)) == 12 and spec_digest(edited) != spec_digest(SPEC["demo"])


def test_latex_escapes_data_strings_but_not_template_source():
    grid = grid_with_render(RENDER)
    table = Resolver(SPEC, Source(grid, frame({}))).table("demo")
    env = environment()
    out = env.from_string(r"\VAR{a} \VAR{b}").render(a="50%_x & y", b=Tex(r"\textbf{z}"))
    assert out == r"50\%\_x \& y \textbf{z}"
    specs = {**SPECS, "scaling": SPEC["demo"]}  # the demo through scaling's template
    tex = render_one(specs, Source(grid, frame({})), "scaling", ["cfg_1.yaml"], Path("runs"))
    # a short note names what ran; the stand-in text, once in the document: escaped
    assert "Ran as: b for qwen2.5-7b; 3 seeds (1, 2, 3)." in tex and "tiny" not in tex
    assert r"(tiny\_model)" in render_document(env, [], "x (tiny_model)")
    assert "cfg\\_1.yaml" in tex                   # provenance: escaped in the comment
    assert "Rows with no runs in this grid: Gone." in tex  # no cell of the grid
    assert "Rows whose runs lack these metrics (not measured on this grid, or failed): Row." \
        in tex
    assert len(table.keys) == 6  # the cells it would read, though none has run


def test_check_specs_names_the_offending_key():
    bad = {"t": {**SPEC["demo"], "rows": [{"id": "r", "lable": "x"}]}}
    with pytest.raises(ConfigError, match=r"t\.rows\[0\].*lable"):
        check_specs(bad)
    bad = {"t": {**SPEC["demo"], "rows": [{"id": "r", "paper": {"nope": 1}}]}}
    with pytest.raises(ConfigError, match="'nope' is not a column"):
        check_specs(bad)
    bad = {"t": {**SPEC["demo"], "columns": [{"id": "a", "fmt": "pretty"}]}}
    with pytest.raises(ConfigError, match=r"columns\[0\]\.fmt"):
        check_specs(bad)


def test_every_declared_table_has_a_template_and_a_paper_number():
    names = table_names(SPECS)
    assert [SPECS[n]["number"] for n in names] == list(range(1, len(names) + 1))
    templates = ROOT / "src/dfil/render/templates"
    for name in names:
        assert (templates / f"{name}.tex.j2").exists(), name
    qualitative = {"relwork_compare", "tnorm_comparison"}
    for name in set(names) - qualitative:
        assert any(r.get("paper") for r in SPECS[name]["rows"]), name


def test_tables_select_the_cells_their_groups_declare():
    """config/paper.yaml lists, per group, the tables it feeds: every cell a table reads
    is in a group that names that table (so the two declarations agree)."""
    grid = load_grid_files([ROOT / "config/paper.yaml"])
    for name in table_names(SPECS):
        for key in table_keys(SPECS, grid, name):
            if name == "headline":  # derived from the other tables
                continue
            assert name in grid.cells[key].tables or any(
                name in grid.cells[k].tables for k in grid.cells if k.rsplit("/", 1)[0]
                == key.rsplit("/", 1)[0]), (name, key)


@pytest.mark.slow
def test_every_table_renders_from_the_smoke_grid_and_the_pdf_compiles(tmp_path):
    """Every declared table and the figures from a smoke-grid aggregate with a
    value for every number a table asks for (the real smoke DAG runs in .ci/run)."""
    grid = load_grid_files([ROOT / "config/smoke.yaml"])
    resolver = Resolver(SPECS, Source(grid))  # no numbers: only what the tables read
    requested = sorted(set().union(*(resolver.table(n).reads for n in table_names(SPECS))))
    rng = np.random.default_rng(0)
    values = {req: float(rng.uniform(0.1, 0.9)) for req in requested}
    agg = frame(values)
    for name in table_names(SPECS):
        tex = render_one(SPECS, Source(grid, agg), name, ["config/smoke.yaml"], Path("runs"))
        (tmp_path / f"{file_stem(SPECS, name)}.tex").write_text(tex)
        assert "\\begin{tabular}" in tex
    out, captions = report(SPECS, grid, agg, resolve_tables(SPECS, grid, agg), tmp_path,
                           load_figures(ROOT / "config/figures.yaml"))
    assert set(captions) == {f"figures/{name}.png" for name in FIGURES}
    assert (tmp_path / "figures" / "membership_functions.png").stat().st_size > 1000
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed: the PDF compile runs where it is (CI)")
    assert compile_pdf(out["tables.tex"]).read_bytes().startswith(b"%PDF")


def test_holm_and_tost_columns_equal_statsmodels():
    grid = grid_with_render(RENDER)
    spec = {"t": {**SPEC["demo"], "rows": [{"id": "r", "label": "R"}],
                  "columns": [*SPEC["demo"]["columns"], {"id": "h", "holm": "p"},
                              {"id": "e", "test": "tost", "margin": 2.0,
                               "a": {"method": "dfil"}, "b": {"method": "finetune"}}]}}
    check_specs(spec)
    vals = {}
    for s, (a, b) in zip((1, 2, 3), ((0.50, 0.48), (0.52, 0.49), (0.51, 0.47)), strict=True):
        vals[(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc")] = a
        vals[(f"frog/b/finetune/lamna/nfull/na/seed{s}", "test.main.acc")] = b
    table = Resolver(spec, Source(grid, frame(vals))).table("t")
    from statsmodels.stats.weightstats import ttost_ind
    p = table.entry("r", "p").mean
    assert table.entry("r", "h").mean == pytest.approx(p)  # one comparison: unchanged
    expected = ttost_ind(np.array([50., 52, 51]), np.array([48., 49, 47]), -2, 2,
                         usevar="unequal")[0]
    assert table.entry("r", "e").mean == pytest.approx(expected)


def test_render_cli_names_the_cell_that_has_no_metrics(tmp_path, capsys):
    from dfil.cli import main

    out = tmp_path / "t.tex"
    rc = main(["render", "--config", str(ROOT / "config/smoke.yaml"), "--tables",
               str(ROOT / "config/tables.yaml"), "--runs", str(tmp_path / "runs"),
               "--table", "lambda_sweep", "--out", str(out)])
    assert rc == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42/metrics.json" in err
    assert "lambda_sweep" in err


def test_tables_without_experiments_get_no_stand_in_note():
    from dfil.render.latex import substitution_note

    resolver = Resolver(SPECS, Source(grid_with_render(RENDER)))
    for name in ("relwork_compare", "tnorm_comparison"):
        assert substitution_note(resolver.table(name), "tiny_model") == ""
    # the seeds run, beside the paper's count the caption keeps
    from dataclasses import replace

    table = replace(resolver.table("distill"), caption="mean over 20 seeds (6 seeds at 72B)")
    note = substitution_note(table, "tiny_model")
    assert note == ("Ran as: b for qwen2.5-7b; 3 seeds (1, 2, 3) where the caption gives "
                    "the paper's 6 or 20."), note


def test_a_range_whose_ends_are_equal_prints_one_value():
    spec = {"r": {"number": 97, "label": "tab:r", "caption": "R.",
                  "where": {"task": "frog", "backbone": "qwen2.5-7b", "seeds": "three",
                            "scale": 100, "metric": "test.main.acc"},
                  "columns": [{"id": "x"}],
                  "rows": [{"id": "a", "label": "A", "cells": {"x": {
                      "tex": "[{lo}, {hi}]", "same": "={lo}",
                      "with": {"lo": {"method": "dfil"}, "hi": {"method": "dfil"}}}}}]}}
    check_specs(spec)
    vals = {(f"frog/b/dfil/lam0.5/nfull/qure/seed{s}", "test.main.acc"): 0.5 for s in (1, 2, 3)}
    table = Resolver(spec, Source(grid_with_render(RENDER), frame(vals))).table("r")
    assert table.entry("a", "x").render() == r"=50.0$\pm$0.0"
