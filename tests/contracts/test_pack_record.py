"""The pack record (dfil.contracts.pack): validated against its schema on the way out."""

import json

import pytest

from dfil.contracts.pack import pack_record, write_pack_record
from dfil.util.errors import MetricsError


def test_a_record_names_what_the_pack_trained_and_finished(tmp_path):
    record = pack_record(["r/a", "r/b", "r/c"], ["r/a", "r/b"], ["r/a"])
    path = tmp_path / "pack.json"
    write_pack_record(path, record)
    assert json.loads(path.read_text())["together"] == ["r/a", "r/b"]
    assert json.loads(path.read_text())["finished"] == ["r/a"]
    with pytest.raises(MetricsError, match=str(path)):
        write_pack_record(path, {**record, "finished": "r/a"})


def test_a_pack_that_gave_up_finishes_no_seed_and_says_why(tmp_path):
    record = pack_record(["r/a"], gave_up={"reason": "TIMEOUT", "message": "at\\n the limit"})
    assert record["gave_up"] == {"reason": "TIMEOUT", "message": "at\\n the limit"}
    with pytest.raises(MetricsError, match="gave_up.reason"):
        pack_record(["r/a"], gave_up={"reason": "tired", "message": ""})
