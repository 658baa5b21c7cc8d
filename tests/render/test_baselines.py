"""Majority-class and chance rows, probe sizes in captions, degenerate marks in the
LaTeX: hand-computed, and declared for every table that needs them."""

from pathlib import Path

import yaml

from dfil.render.baselines import baseline_entry, baseline_metric
from dfil.render.entries import Entry, Row, Table
from dfil.render.latex import (
    DEGENERATE_MARK,
    HEADING,
    degenerate_footnote,
    environment,
    render_table,
)
from dfil.render.probe_sizes import grid_sizes, probe_note

TABLES = Path(__file__).resolve().parents[2] / "config" / "tables.yaml"


def test_baseline_metric_only_for_the_mean_of_an_accuracy():
    assert baseline_metric({"metric": "test.main.acc"}, "majority") == "baseline.test.majority"
    assert baseline_metric({"metric": "qure.mf.acc", "fmt": "mean"}, "chance") == \
        "baseline.qure.chance"
    assert baseline_metric({"metric": "test.main.acc", "fmt": "std"}, "chance") is None
    assert baseline_metric({"metric": "test.main.mono_rate"}, "chance") is None
    assert baseline_metric({}, "chance") is None


def test_baseline_entry_prints_the_mean():
    e = baseline_entry([18.4, 18.4, 18.4], 1, "majority")
    assert e.render() == "18.4" and not e.reads
    assert baseline_entry([], 1, "chance").reason.startswith("chance row: no run")
    # no run of the grid there: the words every entry without runs says (one note)
    assert baseline_entry([], 1, "chance", ran=False).reason == \
        "not run: the grid has no run of that setting"


def test_probe_note_names_both_sizes():
    facts = {("k1", "pred.compositional.main.n"): 128.0,
             ("k2", "pred.compositional.mf.n"): 128.0,
             ("k1", "pred.csmc_a.main.n"): 50.0, ("k1", "pred.ipr.main.n"): 40.0}

    def lookup(key, metric):
        return facts.get((key, metric))

    assert grid_sizes("compositional", ["k1", "k2"], lookup) == [128]
    assert probe_note({"compositional": 900, "csmc": 200, "ipr": 40}, ["k1", "k2"], lookup) == (
        "Probe sets smaller than the paper's: compositional 128 items here, 900 in the "
        "paper; csmc 50 pairs here (5 per domain), 200 in the paper (20 per domain).")
    assert probe_note({"ipr": 40}, ["k1"], lookup) == ""  # the paper's size: nothing to say
    facts[("k1", "pred.naturalistic.main.n")] = 107.0  # 320 every 3rd: uneven domains
    assert probe_note({"naturalistic": 320}, ["k1"], lookup) == (
        "Probe sets smaller than the paper's: naturalistic 107 items here (about 13 per "
        "domain), 320 in the paper (40 per domain).")
    assert probe_note({"entailment": 1344}, ["k1"], lookup) == ""  # not predicted here


def test_a_degenerate_entry_is_marked_and_named_escaped():
    why = "one class for all 500 items in 3 of 3 runs; 100% & _x"
    rows = [Row("dfil", "DFIL", entries={"acc": Entry("stat", values=(0.5, 0.5),
                                                      degenerate=why)}),
            Row("ft", "FT", entries={"acc": Entry("stat", values=(0.4, 0.6))})]
    table = Table("scaling", 5, "tab:scaling", "Scaling", ["acc"], rows,
                  row_names={"dfil": "DFIL (ours)"})
    note = degenerate_footnote(table)
    assert note == (DEGENERATE_MARK + HEADING
                    + r"DFIL (ours) / acc: one class for all 500 items in 3 of 3 runs; "
                    r"100\% \& \_x.")
    tex = render_table(environment(), table, {"package_version": "0", "git_commit": "x",
                                              "config": "c", "config_files": "c.yaml",
                                              "runs": "r", "n_runs": 0, "keys": [],
                                              "hashes": {}})
    assert f"DFIL & 0.5±0.0{DEGENERATE_MARK}" in tex.replace("$\\pm$", "±") or \
        DEGENERATE_MARK in tex.split("DFIL &")[1].split("\\\\")[0]
    assert "FT & " in tex and DEGENERATE_MARK not in tex.split("FT &")[1].split("\\\\")[0]
    assert note in tex
    # one reason marking two entries is said once, naming both
    rows.append(Row("corn", "CORN", entries={"acc": Entry("stat", values=(0.5, 0.5),
                                                          degenerate=why)}))
    assert degenerate_footnote(table).count("one class for all") == 1
    assert "DFIL (ours) / acc, corn / acc: one class" in degenerate_footnote(table)


def _metrics(node, found):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "metric":
                found.add(str(v))
            else:
                _metrics(v, found)
    elif isinstance(node, list):
        for v in node:
            _metrics(v, found)
    return found


def test_every_accuracy_table_has_majority_and_chance_rows():
    specs = yaml.safe_load(TABLES.read_text())
    accuracy = [n for n, s in specs.items()
                if any(m.endswith(".acc") and m.count(".") == 2 for m in _metrics(s, set()))]
    assert len(accuracy) == 12
    for name in accuracy:
        kinds = {r.get("baseline") for r in specs[name]["rows"]}
        assert {"majority", "chance"} <= kinds, name


def test_every_table_reading_a_probe_set_gives_the_papers_size():
    specs = yaml.safe_load(TABLES.read_text())
    paper = {"compositional": 900, "csmc": 200, "entailment": 1344, "ipr": 40,
             "naturalistic": 320}
    for name, spec in specs.items():
        read = {m.split(".")[0] for m in _metrics(spec, set())} & set(paper)
        assert {s: paper[s] for s in read} == spec.get("probes", {}), name


def test_resolved_baseline_rows_and_degenerate_marks_through_the_source():
    """The demo table of test_render with majority and chance rows like its row r: the
    test set's 3 of 4 items in one class -> 75.0, 8 classes -> 12.5 (scaled as the
    column); DFIL's runs each predict one class, so its entry and the Δ are marked."""
    from test_render import RENDER, SPEC, frame, grid_with_render

    from dfil.claims.degenerate import check
    from dfil.render.resolve import Resolver
    from dfil.render.source import Source

    spec = {"demo": {**SPEC["demo"], "rows": [
        *SPEC["demo"]["rows"],
        {"id": "majority", "label": "Majority class", "baseline": "majority", "like": "r"},
        {"id": "chance", "label": "Chance", "baseline": "chance", "like": "r"}]}}
    vals = {}
    for s in (1, 2, 3):
        for cell, acc, classes in (("frog/b/dfil/lam0.5/nfull/qure", 0.5 + s / 100, 1),
                                   ("frog/b/finetune/lamna/nfull/na", 0.4 + s / 100, 3)):
            key = f"{cell}/seed{s}"
            vals.update({(key, "test.main.acc"): acc, (key, "baseline.test.majority"): 0.75,
                         (key, "baseline.test.chance"): 0.125,
                         (key, "pred.test.main.n"): 4.0,
                         (key, "pred.test.main.classes"): float(classes),
                         (key, "pred.test.main.digest"): float(s)})
    table = Resolver(spec, Source(grid_with_render(RENDER), frame(vals), check)).table("demo")
    assert table.entry("majority", "dfil").render() == "75.0"
    assert table.entry("chance", "ft").render() == "12.5"
    assert table.entry("majority", "d").kind == "tex"  # a Δ column has no baseline
    # both means lie below the majority class's 75%: at chance, the Δ with them
    chance = "at chance: mean {}% ≤ majority-class rate 75% on the test set"
    assert table.entry("r", "dfil").degenerate == \
        "one class for all 4 items in 3 of 3 runs; " + chance.format(52)
    assert table.entry("r", "ft").degenerate == chance.format(42)
    assert table.entry("r", "d").degenerate == (
        "a: one class for all 4 items in 3 of 3 runs; " + chance.format(52) + "; b: "
        + chance.format(42))
