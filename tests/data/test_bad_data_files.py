"""A dataset file or source the loaders cannot use is one error naming the file and line
(or the config key), never a traceback or a hub lookup; a valid line is never split."""

import json

import pytest

from dfil.data import load_frog
from dfil.data.io import dumps_jsonl, read_records
from dfil.errors import ConfigError, DataError
from dfil.hub.local import is_hub_id, local_source

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
    assert str(err.value).startswith(f"data.test_source: {missing} does not exist; ")
    assert local_source(str(tmp_path)) == str(tmp_path)  # an existing path, as given
    assert local_source("GAIR/FRoG") == "GAIR/FRoG"  # a hub id, left to datasets
