"""The identity record of a run and the differences that make it another run."""

from __future__ import annotations

import hashlib

from dfil.contracts.identity import differences, identity_problem, inputs_digest, run_identity

A, B = "a" * 64, "b" * 64


def test_the_inputs_digest_is_the_sha256_of_their_sorted_compact_json():
    expected = hashlib.sha256(b'{"data.source/easy.jsonl":"' + A.encode() + b'","model/w":"'
                              + B.encode() + b'"}').hexdigest()
    assert inputs_digest({"model/w": B, "data.source/easy.jsonl": A}) == expected


def test_differences_name_the_config_and_each_changed_file():
    old = run_identity("c", "0123456789abcdef", {"data.source/easy.jsonl": A, "model/w": A})
    new = run_identity("c", "fedcba9876543210", {"data.source/easy.jsonl": B, "model/x": A})
    assert differences(old, old) == []
    assert differences(old, new) == [
        "config 0123456789abcdef -> fedcba9876543210",
        "data.source/easy.jsonl sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb",
        "model/w sha256 aaaaaaaaaaaa -> none",
        "model/x sha256 none -> aaaaaaaaaaaa"]


def test_a_record_without_input_digests_is_never_the_same_run():
    new = run_identity("c", "0123456789abcdef", {"model/w": A})
    assert differences({"config_hash": "0123456789abcdef"}, new) == [
        "its record names no input digests (trained before they were recorded)"]
    assert differences(None, new) == ["its record names no config hash and no input digests"]


def test_a_run_file_of_another_cell_or_config_is_named_with_both():
    record = {"cell": "frog_x_dfil", "config_hash": "0123456789abcdef"}
    assert identity_problem(record, "runs/y/metrics.json", "frog_x_dfil",
                            "0123456789abcdef") is None
    assert identity_problem(record, "runs/y/metrics.json", "frog_y_dfil", "0123456789abcdef") \
        == ("runs/y/metrics.json records the run of cell frog_x_dfil, but its path is the run "
            "of cell frog_y_dfil")
    assert identity_problem(record, "m.json", "frog_x_dfil", "1111111111111111") == (
        "m.json records config 0123456789abcdef, but the grid's cell frog_x_dfil is config "
        "1111111111111111")
