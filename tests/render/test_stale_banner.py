"""The published report's stale banner follows stale.json: rendered by the site's template
into the slot each page declares, filled again when the marker changes, emptied when
nothing is stale."""

from __future__ import annotations

import datetime

from dfil import pages
from dfil.contracts.stale import NAME, update_stale
from dfil.render.stale import BEGIN, END, MD_CLOSE, MD_OPEN, show_stale
from dfil.report.diff import html_report, markdown

T0 = datetime.datetime(2026, 11, 25, 4, 0, tzinfo=datetime.timezone.utc)


def report(tmp_path):
    (tmp_path / "diff.md").write_text(markdown([], "config unit"))
    (tmp_path / "diff.html").write_text(html_report([], "config unit"))
    return (tmp_path / "diff.md").read_text(), (tmp_path / "diff.html").read_text()


def test_every_page_declares_an_empty_slot_that_says_nothing_of_stale(tmp_path):
    md, html = report(tmp_path)
    assert pages.SLOT_OPEN + pages.SLOT_CLOSE in html and "dfil:stale" not in html
    assert MD_OPEN + MD_CLOSE in md and "dfil:stale" not in md
    assert show_stale(tmp_path) == []  # no marker: nothing changes


def test_the_banner_lists_the_stale_files_in_the_slot_and_goes_when_they_are_fresh(
        tmp_path):
    md0, html0 = report(tmp_path)
    update_stale(tmp_path / NAME, ["paper_tables/s/T01.tex"], [], "smk.log", now=T0)
    assert sorted(p.name for p in show_stale(tmp_path)) == ["diff.html", "diff.md"]
    md = (tmp_path / "diff.md").read_text().splitlines()
    assert md[0] == "# Paper diff: config unit" and md[1] == MD_OPEN.strip()
    assert md[2] == BEGIN and END in md and "> - `paper_tables/s/T01.tex`" in md
    assert "see smk.log" in md[3] and "2026-11-25T04:00:00+00:00" in md[3]
    html = (tmp_path / "diff.html").read_text()
    slot = html.index(pages.SLOT_OPEN)
    assert slot < html.index(BEGIN) < html.index("<code>paper_tables/s/T01.tex</code>") \
        < html.index(pages.SLOT_CLOSE) < html.index("<h1>")
    assert "1 published file(s) are from the last good build" in html
    assert show_stale(tmp_path) == []  # the same marker: the same banner, once
    assert (tmp_path / "diff.md").read_text().count(BEGIN) == 1
    update_stale(tmp_path / NAME, [], ["paper_tables/s/T01.tex"])
    show_stale(tmp_path)
    assert (tmp_path / "diff.md").read_text() == md0
    assert (tmp_path / "diff.html").read_text() == html0


def test_a_page_without_the_slot_is_left_as_it_is(tmp_path):
    (tmp_path / "diff.html").write_text("<html><body><h1>old</h1></body></html>\n")
    update_stale(tmp_path / NAME, ["x.tex"], [], "l", now=T0)
    assert show_stale(tmp_path) == []
    assert pages.with_banner("<p>no slot</p>", {"text": "t", "files": []}) is None


def test_the_banner_escapes_file_names():
    page = pages.with_banner(pages.SLOT_OPEN + pages.SLOT_CLOSE,
                             {"text": "Stale <now>", "files": ["a<b>.tex"]})
    assert "Stale &lt;now&gt;" in page and "<code>a&lt;b&gt;.tex</code>" in page


def test_a_garbage_marker_is_set_aside_and_the_pages_lose_its_banner(tmp_path, capsys):
    from dfil.contracts.stale import NAME
    from dfil.render.stale import show_stale

    (tmp_path / NAME).write_text("{garbage", encoding="utf-8")
    assert show_stale(tmp_path) == []
    assert not (tmp_path / NAME).exists() and (tmp_path / f"{NAME}.unreadable").is_file()
    assert "moved to" in capsys.readouterr().err
