"""Prompts cut to max_length are counted (how many, the longest one's tokens), said in one
log line and recorded in metrics.json under its schema (the report: tests/report/
test_cut_prompts.py)."""

from __future__ import annotations

import pytest

from dfil.contracts.metrics import validate_metrics, write_metrics
from dfil.engine.batching import encode
from dfil.engine.truncation import truncation, truncation_line
from dfil.model.backbone import char_tokenizer
from dfil.util.errors import MetricsError
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
    assert record["cut"] == 0 and truncation_line({"test": record}) is None
    cut = {"items": 40, "cut": 3, "longest": 412, "max_length": 128}
    line = truncation_line({"train": cut, "val": {**cut, "cut": 0}, "test": {**cut, "cut": 40}})
    assert line == ("truncation: prompts cut to max_length 128 tokens: train 3 of 40 (longest "
                    "412), test 40 of 40 (longest 412); raise data.max_length to keep them "
                    "whole")


def test_metrics_json_records_it_under_its_schema(tmp_path):
    cut = {"items": 4, "cut": 2, "longest": 31, "max_length": 8}
    record = metrics_record(truncation={"train": cut, "test": cut})
    write_metrics(tmp_path / "metrics.json", record)
    with pytest.raises(MetricsError, match="metrics key truncation"):
        validate_metrics(metrics_record(truncation={"test": {**cut, "extra": 1}}), "f")
    with pytest.raises(MetricsError, match="metrics key truncation"):
        validate_metrics(metrics_record(truncation={"probes": cut}), "f")
