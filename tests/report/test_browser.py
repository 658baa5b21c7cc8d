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


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="needs Debian's chromium")
def test_index_loads_without_console_messages_and_is_screenshot(tmp_path):
    loader = SourceFileLoader("report_browser", str(ROOT / ".ci/report-browser"))
    ci = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(ci)
    out = site.write_pages([scaling_table()], {"scaling": ["Backbone", "Acc (%)"]},
                          _context(), tmp_path / "runs", tmp_path / "tables")
    assert ci.console(BROWSER, out["index.html"]) == []
    shot = ci.screenshot(BROWSER, out["index.html"], ROOT / "build/report-index.png")
    assert shot.stat().st_size > 10_000
    broken = tmp_path / "broken.html"
    broken.write_text("<html><body><script>undefinedName();</script></body></html>")
    assert any("undefinedName" in m for m in ci.console(BROWSER, broken))
