import csv
import json

import pytest
from report_tables import scaling_table

from dfil.report import site
from dfil.report.links import dead_links


def _context():
    return {"title": "DFIL reproduction", "grid": "unit", "standin": "", "commit": "abc",
            "figures": {}, "failures": {"frog/x/dfil/seed1": "TIMEOUT: logs/x.log"},
            }


@pytest.mark.slow
def test_the_report_pages_link_to_each_other_and_to_every_run(tmp_path):
    runs = tmp_path / "runs"
    key = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed1"
    (runs / key).mkdir(parents=True)
    (runs / key / "train_log.jsonl").write_text(
        "\n".join(json.dumps({"epoch": e, "train_total": 3.0 - e, "val_acc_main": 0.2 * e})
                  for e in (1, 2)))
    out_dir = tmp_path / "tables"
    out = site.write_pages([scaling_table()], {"scaling": ["Backbone", "Acc (%)"]},
                          _context(), runs, out_dir)
    for name in ("tables.pdf", "audit.html"):  # written by the other steps
        (out_dir / name).write_text("<html></html>")
    dead, seen = dead_links(out["index.html"])
    assert dead == []
    assert out_dir / "runs" / (key.replace("/", "__") + ".html") in seen
    index = out["index.html"].read_text()
    # DFIL - FT: 4.5, the paper's +1.0: Welch's t one-sided, p < 0.05 on 3 v 3 seeds
    assert "reproduced: 1</span>" in index
    assert "TIMEOUT: logs/x.log" in index and "<svg" in (out_dir / "runs" / (
        key.replace("/", "__") + ".html")).read_text()
    rows = list(csv.DictReader(out["numbers.csv"].open()))
    assert [(r["row"], r["verdict"], r["claims"]) for r in rows] == [
        ("DFIL", "contradicted", "T5:dfil-vs-fine-tune"),
        ("Fine-tune", "inconclusive", "T5:dfil-vs-fine-tune")]
    assert 'src="http' not in index and 'src="//' not in index  # nothing fetched


@pytest.mark.slow
def test_every_string_is_escaped(tmp_path):
    t = scaling_table()
    t.rows[0].label = "<script>alert(1)</script>"
    out = site.write_pages([t], {}, _context(), tmp_path / "runs", tmp_path / "o")
    assert "<script>alert(1)" not in out["tables.html"].read_text()


@pytest.mark.slow
def test_each_figure_stands_on_the_index_with_its_caption(tmp_path):
    caption = "Few-shot <N>; 1 seed(s): 42."
    context = {**_context(), "figures": {"figures/fewshot_curves.png": caption}}
    out_dir = tmp_path / "o"
    (out_dir / "figures").mkdir(parents=True)
    (out_dir / "figures" / "fewshot_curves.png").write_bytes(b"png")
    out = site.write_pages([scaling_table()], {}, context, tmp_path / "runs", out_dir)
    index = out["index.html"].read_text()
    assert ('<figure id="fewshot_curves"><a href="figures/fewshot_curves.png"><img '
            'src="figures/fewshot_curves.png"') in index
    assert "<figcaption>Few-shot &lt;N&gt;; 1 seed(s): 42.</figcaption>" in index


def test_a_runs_provenance_names_its_config_commit_model_and_data():
    from dfil.report.site import provenance_text

    commit = "0123456789abcdef" * 2 + "01234567"
    text = provenance_text("cafe", {"git_commit": "abcdef1234567890", "inputs": {
        "model": {"repo": "Qwen/Qwen2.5-7B", "commit": commit},
        "data": {"source": {"repo": "GAIR/FRoG", "commit": commit},
                 "qure_source": {"path": "results/embedded/data/qure"}}}})
    assert text == ("config cafe; commit abcdef123456; model Qwen/Qwen2.5-7B@0123456789ab; "
                    "source GAIR/FRoG@0123456789ab; qure_source results/embedded/data/qure")
    assert provenance_text("cafe", {}) == "config cafe; commit ?"


@pytest.mark.slow
def test_a_table_over_runs_of_mixed_origin_is_marked_on_the_index_and_its_page(tmp_path):
    """Table.mixed (dfil.results.origin's note, also in its notes) is a badge on the
    index, whose title holds the note, and a note on tables.html; a table of one origin
    has neither."""
    from dataclasses import replace

    note = ("Its runs differ in code commit: 1111111111aa (5 runs), 2222222222bb (1 run). "
            "Numbers compared across them may differ by that change, not only by the setting.")
    plain = scaling_table()
    mixed = replace(plain, notes=[*plain.notes, note], mixed=note)
    badge = "runs differ in code or library versions</span>"
    out = site.write_pages([mixed], {}, _context(), tmp_path / "runs", tmp_path / "o")
    index = out["index.html"].read_text()
    assert index.count(badge) == 1 and f'title="{note}"' in index
    assert f'<p class="note">{note}</p>' in out["tables.html"].read_text()
    out = site.write_pages([plain], {}, _context(), tmp_path / "runs", tmp_path / "p")
    assert badge not in out["index.html"].read_text()
    assert "Its runs differ" not in out["tables.html"].read_text()


@pytest.mark.slow
def test_controls_stand_beside_the_verdicts_and_in_claims_csv(tmp_path):
    from types import SimpleNamespace

    from dfil.claims import control_result

    spec = SimpleNamespace(family="ordinal", metric="test.main.acc", direction="greater",
                           threshold=0.1, ceiling=None)
    cells = ["frog/smollm2-135m/dfil", "frog/smollm2-135m/finetune"]  # the claim's cells
    context = {**_context(),
               "controls": [control_result("ordinal", spec, [(0.9, 0.6)], "", cells)]}
    out = site.write_pages([scaling_table()], {}, context, tmp_path / "runs", tmp_path / "o")
    index = out["index.html"].read_text()
    assert '<h2 id="controls">Positive controls</h2>' in index
    assert ("<td><code>test.main.acc: control - reference &gt;= +0.1 on every seed</code></td>"
            "<td>1</td><td>0.900</td><td>0.600</td><td>+0.300</td>") in index
    [row] = list(csv.DictReader(out["claims.csv"].open()))
    assert row["claim_family"] == "ordinal"
    assert row["control"].startswith("passed: ordinal test.main.acc control 0.9 vs "
                                     "reference 0.6 (mean +0.3")


def test_the_index_cuts_a_long_caption_at_a_word_boundary_never_inside_a_word():
    from dfil.report.site import short_caption

    assert short_caption("Scaling accuracy (%), mean ± std") == "Scaling accuracy (%), mean ± std"
    # 12 characters: "Cross-task" and " …" fit, "accuracy" would not
    assert short_caption("Cross-task accuracy over three seeds", 12) == "Cross-task …"
    long = "word " * 40 + "Mono.: the violation rate"
    cut = short_caption(long.strip())
    assert len(cut) <= 140 and cut.endswith(" …")
    assert all(w == "word" for w in cut.removesuffix(" …").split())


@pytest.mark.slow
def test_the_index_lists_each_table_with_its_caption_whole_or_cut_between_words(tmp_path):
    from dataclasses import replace

    caption = ("Cross-task accuracy, mean and std over three seeds with the membership "
               "function violation rate on a grid of one thousand points, the ensemble "
               "weighted by alpha one half")  # 168 characters; "the ensemble …" would take 143
    t = replace(scaling_table(), caption=caption)
    index = site.write_pages([t], {}, _context(), tmp_path / "runs",
                             tmp_path / "o")["index.html"].read_text()
    shown = ("Cross-task accuracy, mean and std over three seeds with the membership "
             "function violation rate on a grid of one thousand points, the …")
    assert f'T5</a>: <span title="{caption}">{shown}</span>' in index
    # the tables it was made from, counted, never a number written into the page
    assert ": the table in the paper's layout" in index


@pytest.mark.slow
def test_every_page_of_a_standin_grids_report_carries_the_standin_banner(tmp_path):
    runs = tmp_path / "runs"
    context = {**_context(), "standin": "a tiny random Llama on synthetic data."}
    out = site.write_pages([scaling_table()], {}, context, runs, tmp_path / "o")
    banner = ('<div class="standin" id="standin-banner"><b>Stand-in grid:</b> a tiny random '
              "Llama on synthetic data. Not the paper&#39;s models or data: no number here is "
              "the paper&#39;s setting.</div>")
    run_pages = [p for name, p in out.items() if name.startswith("runs/")]
    assert len(run_pages) == 6  # three seeds a side
    for page in [out["index.html"], out["tables.html"], out["diff.html"], *run_pages]:
        assert page.read_text().count(banner) == 1, page
    paper = site.write_pages([scaling_table()], {}, _context(), runs, tmp_path / "p")
    assert not any("standin-banner" in p.read_text() for name, p in paper.items()
                   if name.endswith(".html"))


def test_the_claims_table_holds_every_row_in_its_html_and_is_laid_out_to_the_page():
    from dfil.claims import judge

    frame = site.claims_frame(judge([scaling_table()]))
    page = site.claims_table(frame)
    # every claim is a row of the HTML itself (nothing drawn by a script), in order
    assert page.count("<tr><td>") == len(frame) == 1
    assert "<script" not in page
    heads = [h for h in site.CLAIM_WIDTHS if h != "Planned"]  # no plan wrote this grid
    assert list(frame.columns) == heads
    # the verdict and why come before the test's details; the widths fill the table
    assert heads.index("Why") == 6 and heads.index("Verdict") == 5
    widths = [float(w) for w in __import__("re").findall(r'<col style="width:([\d.]+)%">',
                                                          page)]
    assert len(widths) == len(heads) and sum(widths) == pytest.approx(100, abs=0.2)
    # 8 of the 123 shares: the claim column
    assert widths[0] == pytest.approx(100 * 8 / 123, abs=0.05)
    # where the paper prints the claim: its table, the place itself folded beneath
    assert ("<td><details><summary>T5</summary><ul><li>T5:dfil-vs-fine-tune DFIL vs "
            "fine-tune (paper +1)</li></ul></details></td>") in page


def test_an_interactive_table_keeps_every_row_however_large():
    import pandas as pd

    # 400 rows of 300 characters: past itables' default 64 KB, where it would downsample
    frame = pd.DataFrame({"a": [f"row{i}:" + "x" * 300 for i in range(400)]})
    page = site.datatable(frame, "t", paging=False)
    assert all(f"row{i}:" in page for i in range(400))
    assert "downsampled" not in page.lower()


@pytest.mark.parametrize("p, p_holm, cell", [(0.01234, 0.0394, "0.0123 (0.0394)"),
                                             (0.01234, None, "0.0123"),
                                             (None, None, "")])
def test_the_p_cell_shows_the_raw_p_and_the_holm_p_where_each_exists(p, p_holm, cell):
    assert site._p_cell(p, p_holm) == cell
