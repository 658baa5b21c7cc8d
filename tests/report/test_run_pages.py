"""A run's page: every metric a table reads from it, with its value and a link to each
cell it feeds; the files it read with their sha256; provenance as values, never reprs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from report_tables import scaling_table

from dfil.contracts.metrics import write_metrics
from dfil.render.entries import Entry
from dfil.report import feeds, runs, site
from dfil.report.links import dead_links

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from records import metrics_record  # noqa: E402

KEY = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed1"


def test_cell_anchor_keeps_only_url_and_id_safe_characters():
    assert feeds.cell_anchor("T5", "dfil", "acc") == "T5.dfil.acc"
    assert feeds.cell_anchor("T7", "a b/c", "Δ (%)") == "T7.a_b_c._____"  # Δ, space, (, %, )


def test_run_feeds_name_each_metric_and_every_cell_it_goes_into():
    t = scaling_table()
    extra = Entry("stat", values=(1.0,), reads=frozenset({(KEY, "csmc.mf.consistency")}))
    t.rows[0].entries["hidden"] = extra  # read, but prints no number of numbers.csv
    t.reads = frozenset({(KEY, "csmc.mf.consistency"), (KEY, "test.main.acc")})
    numbers = [{"table": "T5", "row_id": "dfil", "column_id": "acc", "row": "DFIL",
                "column": "Acc (%)"}]
    got = feeds.run_feeds([t], numbers)[KEY]
    assert got == {
        "csmc.mf.consistency": [{"href": "tables.html#T5",
                                 "text": "T5 (read by the table, no number of its own)"}],
        "test.main.acc": [{"href": "tables.html#T5.dfil.acc", "text": "T5 DFIL | Acc (%)"}]}


def test_show_writes_values_never_reprs():
    assert runs.show(None) == "none" and runs.show(True) == "yes"
    assert runs.show(0.123456) == "0.1235" and runs.show([1, 2.5]) == "1, 2.5"
    assert runs.flat({"a": {"b": None, "c": {}}, "d": [{"e": 1}]}) == [
        ("a.b", "none"), ("a.c", "none"), ("d.0.e", "1")]


def test_a_run_page_shows_the_metrics_tables_read_linked_to_their_cells(tmp_path):
    run = tmp_path / "runs" / KEY
    run.mkdir(parents=True)
    sha = "ab" * 32
    prov = {"package_version": "0.1.0", "git_commit": "deadbeef", "device": "cpu",
            "wall_seconds": 3.0, "versions": {"torch": "2.13.0", "cuda": None,
                                              "transformers": "5.0", "peft": "0.1",
                                              "bitsandbytes": None, "flash_attn": None},
            "inputs": {"model": {"id": "embedded:smollm2-135m", "path": "/c/smollm2",
                                 "sha256": {"model.safetensors": sha},
                                 "stamp": "/c/smollm2/dfil-sha256.json"},
                       "data": {"source": {"path": "data/frog", "note": "no stamp"}}}}
    acc = {"acc": 0.4028, "per_class_acc": [0.5], "n": 4}
    write_metrics(run / "metrics.json", metrics_record(
        test={"main": acc}, provenance=prov))
    out_dir = tmp_path / "o"
    out = site.write_pages([scaling_table()], {"scaling": ["Backbone", "Acc (%)"]},
                          {"title": "t", "grid": "u", "standin": "", "commit": "a",
                           "figures": {}, "failures": {}}, tmp_path / "runs", out_dir)
    (out_dir / "tables.pdf").write_text("%PDF")
    (out_dir / "audit.html").write_text("<html></html>")
    page = (out_dir / "runs" / runs.page_name(KEY)).read_text()
    # test.main.acc = 0.4028 feeds T5's DFIL cell, whose anchor tables.html holds.
    assert ('<td><code>test.main.acc</code></td><td>0.4028</td><td><a href="../tables.html'
            '#T5.dfil.acc">T5 DFIL | Acc (%)</a></td>') in page
    assert 'id="T5.dfil.acc"' in out["tables.html"].read_text()
    assert f"<code>{sha}</code>" in page and "digests from /c/smollm2/dfil-sha256.json" in page
    assert "embedded:smollm2-135m (/c/smollm2)" in page and "no stamp" in page
    assert "<th>versions.cuda</th><td>none</td>" in page
    assert "{" not in page.split("<pre>")[0].split("</style>")[1]  # no dict repr
    assert dead_links(out["index.html"])[0] == []


def test_a_run_evaluated_before_digests_says_so(tmp_path):
    rows = runs.inputs_rows({"inputs": {"model": {"id": "random"}}})
    assert rows == [{"name": "model", "what": "random", "stamp": "", "files": [],
                     "note": "no sha256 recorded (a run evaluated before inputs were "
                             "digested)"}]
    assert json.dumps(rows)  # plain data for the template
