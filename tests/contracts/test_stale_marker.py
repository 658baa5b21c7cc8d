"""The stale marker (paper_tables/<grid>/stale.json): failed files added, published ones
taken out, removed when nothing is stale, and a broken marker named."""

from __future__ import annotations

import datetime
import json

import pytest

from dfil.contracts.stale import (
    FORMAT,
    NAME,
    published_before,
    read_stale,
    stale_note,
    update_stale,
)
from dfil.util.errors import InputError

T0 = datetime.datetime(2026, 11, 25, 4, 0, tzinfo=datetime.timezone.utc)
T1 = T0 + datetime.timedelta(hours=1)


def test_no_marker_reads_as_none(tmp_path):
    assert read_stale(tmp_path / NAME) is None
    assert update_stale(tmp_path / NAME, [], ["a.tex"]) is None
    assert not (tmp_path / NAME).exists()


def test_a_failed_rebuild_marks_what_it_did_not_publish(tmp_path):
    path = tmp_path / NAME
    record = update_stale(path, ["t/T02.tex", "t/T01.tex"], ["t/T03.tex"], "smk.log", now=T0)
    assert record == {"format": FORMAT, "since": "2026-11-25T04:00:00+00:00",
                      "updated": "2026-11-25T04:00:00+00:00", "log": "smk.log",
                      "stale": ["t/T01.tex", "t/T02.tex"]}
    assert read_stale(path) == record == json.loads(path.read_text())


def test_a_second_failure_adds_and_keeps_the_first_time(tmp_path):
    path = tmp_path / NAME
    update_stale(path, ["a.tex"], [], "one.log", now=T0)
    record = update_stale(path, ["b.tex"], [], None, now=T1)
    assert record["since"] == T0.isoformat() and record["updated"] == T1.isoformat()
    assert record["stale"] == ["a.tex", "b.tex"] and record["log"] == "one.log"


def test_publishing_again_takes_the_mark_off_and_the_last_one_removes_the_marker(tmp_path):
    path = tmp_path / NAME
    update_stale(path, ["a.tex", "b.tex"], [], "x.log", now=T0)
    assert update_stale(path, [], ["a.tex"], now=T1)["stale"] == ["b.tex"]
    assert update_stale(path, [], ["b.tex"], now=T1) is None
    assert not path.exists()


@pytest.mark.parametrize("text", ["{", '{"format": "other"}', json.dumps(
    {"format": FORMAT, "since": "", "updated": "", "log": "", "stale": [1]})])
def test_a_broken_marker_is_named(tmp_path, text):
    (tmp_path / NAME).write_text(text)
    with pytest.raises(InputError, match=f"{tmp_path / NAME}: .*delete it"):
        read_stale(tmp_path / NAME)


def test_a_good_run_that_leaves_files_stale_keeps_naming_the_failed_run(tmp_path):
    path = tmp_path / NAME
    update_stale(path, ["a.tex", "b.tex"], [], "failed.log", now=T0)
    record = update_stale(path, [], ["a.tex"], "good.log", now=T1)
    assert record == {"format": FORMAT, "since": T0.isoformat(), "updated": T0.isoformat(),
                      "log": "failed.log", "stale": ["b.tex"]}


def test_only_files_an_earlier_build_published_are_stale(tmp_path):
    """A first build that fails publishes nothing: its files are missing, not stale, and
    no marker is written; after a good build, a failed one marks the files it left."""
    old = tmp_path / "T01.tex"
    never = tmp_path / "T02.tex"
    assert published_before([old, never]) == set()
    assert stale_note(2, update_stale(tmp_path / NAME, published_before([old, never]), [])) \
        == ("dfil: the rebuild failed before publishing 2 file(s); no earlier build "
            "published them, so none is marked stale")
    assert not (tmp_path / NAME).exists()
    old.write_text("x")
    marker = update_stale(tmp_path / NAME, published_before([old, never]), [], now=T0)
    assert marker["stale"] == [str(old)]
    assert stale_note(2, marker) == ("dfil: the rebuild failed before publishing 2 file(s); "
                                     "1 published file(s) are from the last good build and "
                                     "marked stale")


@pytest.mark.parametrize("text", ["{not json", '{"format": "other"}', "\xff\xfe"])
def test_a_garbage_marker_is_moved_aside_and_replaced_never_a_failed_build(
        tmp_path, capsys, text):
    marker = tmp_path / NAME
    marker.write_text(text, encoding="latin-1")
    record = update_stale(marker, ["T02.tex"], ["T05.tex"], "run.log", now=T0)
    assert record["stale"] == ["T02.tex"] and read_stale(marker) == record
    assert (tmp_path / f"{NAME}.unreadable").read_text(encoding="latin-1") == text
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and str(marker) in said and "replaces it" in said
    marker.write_text(text, encoding="latin-1")
    assert update_stale(marker, [], ["T02.tex"]) is None and not marker.exists()
