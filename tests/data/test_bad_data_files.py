"""A dataset file or source the loaders cannot use is one error naming the file and line
(or the config key), never a traceback or a hub lookup; a valid line is never split."""

import json

import pytest

from dfil.data import load_frog
from dfil.data.io import dumps_jsonl, read_records
from dfil.hub.local import is_hub_id, local_source
from dfil.util.errors import ConfigError, DataError

GOOD = {"question": "[MASK] of them", "target_percentage_mention": "5 %", "quantifier": "few"}


def test_a_line_separator_inside_a_string_is_part_of_its_line(tmp_path):
    # U+2028, U+2029, U+0085 and a form feed are valid inside a JSON string, and
    # str.splitlines() would split at each: the reader splits at "\n" only
    questions = ["a\u2028b [MASK]", "c\u2029d [MASK]", "e\u0085f [MASK]", "g\x0ch [MASK]"]
    path = tmp_path / "easy.jsonl"
    path.write_bytes(dumps_jsonl({**GOOD, "question": q} for q in questions))
    assert [r["question"] for _, r in read_records(path)] == questions
    assert load_frog(path, "easy")["question"].tolist() == questions


def test_crlf_line_ends_are_read(tmp_path):
    path = tmp_path / "easy.jsonl"
    path.write_bytes((json.dumps(GOOD) + "\r\n" + json.dumps(GOOD) + "\r\n").encode())
    assert [n for n, _ in read_records(path)] == [1, 2]


@pytest.mark.parametrize("question", [None, 3, ""])
def test_a_question_that_is_no_text_names_file_and_line(tmp_path, question):
    path = tmp_path / "easy.jsonl"
    path.write_bytes(dumps_jsonl([GOOD, {**GOOD, "question": question}]))
    with pytest.raises(DataError) as err:
        load_frog(path, "easy")
    assert str(err.value) == (f"{path}:2: 'question' must be a non-empty string, got "
                              f"{question!r}")


def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path):
    path = tmp_path / "easy.jsonl"
    good = json.dumps(GOOD).encode()
    path.write_bytes(good + b"\n" + good + b"\n" + b'{"question": "caf\xe9 [MASK]"}\n')
    with pytest.raises(DataError) as err:
        load_frog(path, "easy")
    offset = 2 * (len(good) + 1) + len(b'{"question": "caf')
    assert str(err.value) == (f"{path}:3: not UTF-8 (byte 0xe9 at offset {offset}); save the "
                              "file as UTF-8")


@pytest.mark.parametrize("source,hub", [
    ("GAIR/FRoG", True), ("mteb/sts22-crosslingual-sts", True), ("results/smoke/data/frog", False),
    ("/data/frog", False), ("data/easy.jsonl", False), ("./frog", False), ("frog", False),
])
def test_a_hub_id_is_told_from_a_path(source, hub):
    assert is_hub_id(source) is hub


def test_a_missing_local_source_names_its_key_and_never_asks_the_hub(tmp_path, monkeypatch):
    import datasets

    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("hub lookup"))
    missing = str(tmp_path / "nowhere" / "frog")
    with pytest.raises(ConfigError) as err:
        local_source(missing, key="data.test_source")
    assert str(err.value) == (f"data.test_source: {missing} does not exist; give an existing "
                              "file or directory")
    assert local_source(str(tmp_path)) == str(tmp_path)  # an existing path, as given


@pytest.mark.parametrize("source", ["data/frog", "GAIR/FRoG"])
def test_a_source_shaped_like_a_hub_id_that_is_no_path_is_refused(tmp_path, monkeypatch,
                                                                  source):
    """Jobs read a hub dataset only once fetched (``hub:<repo>@<commit>``), so a relative
    path with two parts (or the default ``GAIR/FRoG`` of an empty cell) that is not here
    is a typo or an unfetched dataset, never a hub lookup."""
    import datasets

    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("hub lookup"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        local_source(source)
    assert str(err.value) == (f"data.source: {source} does not exist; give an existing file "
                              f"or directory (a hub dataset is read once fetched: declare "
                              f"{source} in the grid's datasets: and name it dataset:<entry>)")
    (tmp_path / source).mkdir(parents=True)
    assert local_source(source) == source  # a directory of that name is read as a path


def test_a_symlink_loop_as_source_names_the_key_and_the_loop(tmp_path):
    loop = tmp_path / "frog"
    loop.symlink_to("frog")
    with pytest.raises(ConfigError) as err:
        local_source(str(loop))
    assert str(err.value) == (f"data.source: {loop} is a symlink loop (it, or a directory "
                              "above it, links back to itself); point the link at the real "
                              "file or directory; give an existing file or directory")


@pytest.mark.parametrize("name", ["easy.jsonl", "easy-00000.parquet"])
def test_a_symlink_loop_as_split_file_names_the_file_not_no_file(tmp_path, name):
    """The directory holds the split's name, but it loops: the error names that file,
    never "no file for split"."""
    (tmp_path / name).symlink_to(name)
    with pytest.raises(DataError) as err:
        load_frog(tmp_path, "easy")
    assert str(err.value).startswith(f"{tmp_path / name} is a symlink loop (")


def test_a_dangling_split_link_names_its_target(tmp_path):
    (tmp_path / "easy.jsonl").symlink_to(tmp_path / "moved" / "easy.jsonl")
    with pytest.raises(DataError) as err:
        load_frog(tmp_path, "easy")
    assert str(err.value) == (f"{tmp_path / 'easy.jsonl'} is a symlink to "
                              f"{tmp_path / 'moved' / 'easy.jsonl'}, which does not exist")
