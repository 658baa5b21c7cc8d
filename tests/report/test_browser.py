"""The report in a real browser (headless Chromium, skipped without it): the pages load
from the file system with no console message, the interactive tables are drawn, and the
index is screenshot into build/ for a reviewer."""

import importlib.util
import shutil
from importlib.machinery import SourceFileLoader
from pathlib import Path

import pytest
from report_tables import scaling_table
from test_site import _context

from dfil.report import site

ROOT = Path(__file__).resolve().parents[2]
BROWSER = next((b for b in ("chromium", "chromium-browser") if shutil.which(b)), None)


def _ci():
    loader = SourceFileLoader("report_browser", str(ROOT / ".ci/report-browser"))
    ci = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(ci)
    return ci


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="needs Debian's chromium")
def test_index_loads_without_console_messages_and_is_screenshot(tmp_path):
    ci = _ci()
    out = site.write_pages([scaling_table()], {"scaling": ["Backbone", "Acc (%)"]},
                          _context(), tmp_path / "runs", tmp_path / "tables")
    assert ci.console(BROWSER, out["index.html"]) == []
    shot = ci.screenshot(BROWSER, out["index.html"], ROOT / "build/report-index.png")
    assert shot.stat().st_size > 10_000
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedName();</script></body></html>")
    assert any("undefinedName" in m for m in ci.console(BROWSER, broken))


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="needs Debian's chromium")
@pytest.mark.parametrize("plan", ["", "the plan of 25 GPU-h: 41 of 67 claims"])
def test_the_claims_table_fits_a_1280_px_window_sorts_and_holds_every_row(tmp_path, plan):
    ci = _ci()
    context = {**_context(), "standin": "a tiny random Llama", "plan": plan}
    out = site.write_pages([scaling_table()], {}, context, tmp_path / "runs",
                           tmp_path / "tables")
    assert ("<th>Planned</th>" in out["index.html"].read_text()) == bool(plan)
    size = ci.claims_layout(BROWSER, out["index.html"])
    # body: at most 1200 px of content at a 1280 px window; the table fills it, no wider;
    # DataTables made it sortable and every head's words are whole
    assert size["window"] == 1280 and size["table"] == size["box"] == 1200
    assert size["sortable"] and size["cut_heads"] == []
    assert ci.layout_problems(size) == [] and ci.claims_rows(tmp_path / "tables") == []
    assert ci.banner_problems(tmp_path / "tables", list(out.values())) == []


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="needs Debian's chromium")
def test_a_wide_table_a_cut_head_and_a_page_without_its_banner_are_found(tmp_path):
    ci = _ci()
    context = {**_context(), "standin": "a tiny random Llama"}
    out = site.write_pages([scaling_table()], {}, context, tmp_path / "runs",
                           tmp_path / "tables")
    wide = tmp_path / "wide" / "index.html"
    wide.parent.mkdir()
    wide.write_text('<html><body style="margin:0"><div style="width:1000px">'
                    '<table id="claims" style="width:1500px;table-layout:fixed"><colgroup>'
                    '<col style="width:20px"><col></colgroup><thead><tr><th>Reproduced</th>'
                    "<th>x</th></tr></thead><tbody><tr><td>x</td><td>y</td></tr></tbody>"
                    "</table></div></body></html>")
    size = ci.claims_layout(BROWSER, wide)
    assert (size["table"], size["box"]) == (1500, 1000)
    assert ci.layout_problems(size) == [
        "index.html: claims table scrolls sideways at 1280 px (table 1500 px, container "
        "1000 px)", "index.html: page 1500 px wide at a 1280 px window",
        "index.html: the claims table was not made sortable (its script failed)",
        "index.html: claims head 'Reproduced' has a word wider than its column at 1280 px "
        "(dfil.report.site.CLAIM_WIDTHS)"]
    run_page = next(p for n, p in out.items() if n.startswith("runs/"))
    run_page.write_text(run_page.read_text().replace('id="standin-banner"', ""))
    assert ci.banner_problems(tmp_path / "tables", list(out.values())) == [
        f"{run_page}: no stand-in banner where the index has one"]


def test_the_claims_rows_are_counted_in_the_html_and_against_claims_csv(tmp_path):
    ci = _ci()
    (tmp_path / "claims.csv").write_text("claim,verdict\na,reproduced\nb,contradicted\n")
    (tmp_path / "index.html").write_text(
        '<html><body><div id="standin-banner">s</div><table id="claims"><thead><tr><th>c'
        "</th></tr></thead><tbody><tr><td>a<table><tbody><tr><td>inner</td></tr></tbody>"
        "</table></td></tr></tbody></table></body></html>")
    found = ci.read_page(tmp_path / "index.html")
    assert (found.rows, found.banner) == (1, True)  # the nested table's row not counted
    assert ci.claims_rows(tmp_path) == [
        "index.html: claims table has 1 rows in its HTML, claims.csv 2"]
