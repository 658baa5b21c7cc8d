"""Prompts cut to max_length are counted (how many, the longest one's tokens), said in one
log line, recorded in metrics.json under its schema, and shown by the report."""

from __future__ import annotations

import pytest

from dfil.contracts.metrics import validate_metrics, write_metrics
from dfil.engine.batching import encode
from dfil.engine.truncation import truncation, truncation_line
from dfil.errors import MetricsError
from dfil.model.backbone import char_tokenizer
from records import metrics_record

PROMPTS = ["abc", "abcdefghij", "a" * 30, "xy"]


def test_encode_keeps_the_lengths_before_the_cut_and_the_tokenizers_own_cut():
    tok = char_tokenizer()
    for side in ("left", "right"):
        enc = encode(tok, PROMPTS, max_length=8, truncation_side=side)
        tok.truncation_side = side
        assert enc.ids == tuple(map(tuple, tok(PROMPTS, truncation=True,
                                                 max_length=8)["input_ids"]))
        whole = [len(x) for x in tok(PROMPTS)["input_ids"]]
        assert enc.source_lengths.tolist() == whole and max(enc.lengths) == 8
        assert truncation(enc, 8) == {"items": 4, "cut": 2, "longest": whole[2],
                                      "max_length": 8}
    assert encode(tok, PROMPTS, max_length=8).take([2, 0]).source_lengths.tolist() == [
        whole[2], whole[0]]


def test_nothing_cut_is_no_log_line_and_a_cut_is_one():
    enc = encode(char_tokenizer(), PROMPTS, max_length=64)
    record = truncation(enc, 64)
    assert record["cut"] == 0 and truncation_line("test", record) is None
    line = truncation_line("train", {"items": 40, "cut": 3, "longest": 412, "max_length": 128})
    assert line == ("truncation: 3 of 40 train prompts cut to max_length 128 tokens (the "
                    "longest has 412); raise data.max_length to keep them whole")


def test_metrics_json_records_it_under_its_schema(tmp_path):
    cut = {"items": 4, "cut": 2, "longest": 31, "max_length": 8}
    record = metrics_record(truncation={"train": cut, "test": cut})
    write_metrics(tmp_path / "metrics.json", record)
    with pytest.raises(MetricsError, match="metrics key truncation"):
        validate_metrics(metrics_record(truncation={"test": {**cut, "extra": 1}}), "f")
    with pytest.raises(MetricsError, match="metrics key truncation"):
        validate_metrics(metrics_record(truncation={"probes": cut}), "f")


def test_the_report_lists_the_runs_with_cut_prompts(tmp_path):
    from report_tables import scaling_table

    from dfil.report import site

    runs = tmp_path / "runs"
    key = "frog/smollm2-135m/dfil/lam0.5/nfull/qure/seed1"
    (runs / key).mkdir(parents=True)
    cut = {"items": 40, "cut": 40, "longest": 412, "max_length": 128}
    whole = {"items": 8, "cut": 0, "longest": 90, "max_length": 128}
    write_metrics(runs / key / "metrics.json",
                  metrics_record(truncation={"test": cut, "qure": whole}))
    context = {"title": "t", "grid": "unit", "standin": "", "commit": "abc", "figures": {},
               "failures": {}}
    out = site.write_site([scaling_table()], {}, context, runs, tmp_path / "o")
    index = out["index.html"].read_text()
    assert "Runs with prompts cut to max_length" in index
    assert f'<a href="runs/{key.replace("/", "__")}.html">{key}</a>' in index
    assert "test: 40 of 40 cut to 128 tokens (longest 412)" in index and "qure:" not in index
    page = (tmp_path / "o" / "runs" / (key.replace("/", "__") + ".html")).read_text()
    assert "Prompts cut to max_length" in page and "<b>40</b>" in page


def test_no_cut_prompt_no_list(tmp_path):
    from report_tables import scaling_table

    from dfil.report import site

    context = {"title": "t", "grid": "unit", "standin": "", "commit": "abc", "figures": {},
               "failures": {}}
    out = site.write_site([scaling_table()], {}, context, tmp_path / "runs", tmp_path / "o")
    assert "prompts cut" not in out["index.html"].read_text()
