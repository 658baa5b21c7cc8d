"""The published report's stale banner follows stale.json: added under the title, replaced
in place when the marker changes, removed when nothing is stale."""

from __future__ import annotations

import datetime

from dfil.contracts.stale import NAME, update_stale
from dfil.render.stale import BEGIN, END, show_stale

T0 = datetime.datetime(2026, 11, 25, 4, 0, tzinfo=datetime.timezone.utc)
MD = "# Paper diff\n\nbody\n"
HTML = "<html><body>\n<h1>Paper diff</h1>\n<p>body</p>\n</body></html>\n"


def report(tmp_path):
    (tmp_path / "diff.md").write_text(MD)
    (tmp_path / "diff.html").write_text(HTML)


def test_without_a_marker_nothing_changes(tmp_path):
    report(tmp_path)
    assert show_stale(tmp_path) == []
    assert (tmp_path / "diff.md").read_text() == MD


def test_the_banner_lists_the_stale_files_under_the_title_and_goes_when_they_are_fresh(
        tmp_path):
    report(tmp_path)
    update_stale(tmp_path / NAME, ["paper_tables/s/T01.tex"], [], "smk.log", now=T0)
    assert sorted(p.name for p in show_stale(tmp_path)) == ["diff.html", "diff.md"]
    md = (tmp_path / "diff.md").read_text().splitlines()
    assert md[0] == "# Paper diff" and md[1] == BEGIN and END in md
    assert "> - `paper_tables/s/T01.tex`" in md
    assert "see smk.log" in md[2] and "2026-11-25T04:00:00+00:00" in md[2]
    html = (tmp_path / "diff.html").read_text()
    assert html.index("<h1>") < html.index(BEGIN) < html.index("<code>paper_tables/s/T01.tex")
    assert show_stale(tmp_path) == []  # the same marker: the same banner, once
    assert (tmp_path / "diff.md").read_text().count(BEGIN) == 1
    update_stale(tmp_path / NAME, [], ["paper_tables/s/T01.tex"])
    show_stale(tmp_path)
    assert (tmp_path / "diff.md").read_text() == MD
    assert (tmp_path / "diff.html").read_text() == HTML
