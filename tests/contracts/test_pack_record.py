"""The pack record (dfil.contracts.pack): validated against its schema on the way out."""

import json

import pytest

from dfil.contracts.pack import pack_record, pack_summary, sealable, write_pack_record
from dfil.util.errors import MetricsError

#: A sealed summary whose attempts are those of a run directory's ``attempts.json`` "[]".
SUMMARY = {"cell": "c", "config_hash": "h", "identity": {}, "attempts": [], "trained": True,
           "provenance": {}}


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


def finished_by_pack(paths, run) -> bool:
    return pack_summary(paths, run) is not None


def test_a_seed_the_record_finished_only_writes_its_summary(tmp_path):
    """pack_summary (what a seed's train_cell job asks for): a seed its pack finished
    and sealed, whose run still holds its attempts and checkpoint; not one it did not
    seal, nor one it trained with remediation ahead, nor before the record exists (a dry
    run), nor one whose training was moved aside since, nor from a damaged record or
    another JSON input."""
    runs = {name: tmp_path / "runs" / name for name in ("a", "b")}
    for run in runs.values():
        run.mkdir(parents=True)
        (run / "attempts.json").write_text("[]")
        (run / "model.safetensors").write_bytes(b"weights")
    a, b = str(runs["a"]), str(runs["b"])
    path = tmp_path / "pack.json"
    other = tmp_path / "stamp.json"
    other.write_text(json.dumps({"finished": [b]}))
    assert not finished_by_pack([str(other), str(path)], a)  # not written yet
    write_pack_record(path, pack_record([a, b], [a, b], [a]))
    assert not finished_by_pack([path], a)  # not sealed: its own job summarises it
    write_pack_record(path, pack_record([a, b], [a, b], [a], summaries={a: SUMMARY}))
    assert finished_by_pack([str(other), str(path)], a)
    assert not finished_by_pack([path], b)  # collapse remediation ahead: it trains
    assert not finished_by_pack([path], str(tmp_path / "runs"))
    assert not finished_by_pack([other], b)  # no pack record
    (runs["a"] / "attempts.json").unlink()  # moved aside: it trains again, alone
    assert not finished_by_pack([path], a)
    (runs["a"] / "attempts.json").write_text("[]")
    (runs["a"] / "model.safetensors").unlink()
    assert not finished_by_pack([path], a)
    (runs["a"] / "model.safetensors").write_bytes(b"weights")
    assert finished_by_pack([path], a)
    path.write_text(json.dumps({**json.loads(path.read_text()), "finished": a}))
    assert not finished_by_pack([path], a)  # damaged: the job asks what it always did
    path.write_text('{"format": "dfil-pack/1", "fini')
    assert not finished_by_pack([path], a)


def test_a_record_holds_the_summaries_of_the_seeds_it_finished(tmp_path):
    """pack_summary: a finished seed's summary, as the record holds it, while its
    attempts are the run's attempts.json (NaN equal to NaN); none for a seed not
    finished, one whose attempts.json holds other attempts, is damaged or was moved
    aside, nor from a record without summaries; a summary for a run the pack did not
    finish is refused."""
    runs = {name: tmp_path / name for name in ("a", "b")}
    for run in runs.values():
        run.mkdir()
        (run / "attempts.json").write_text("[]")
        (run / "model.safetensors").write_bytes(b"weights")
    a, b = str(runs["a"]), str(runs["b"])
    summary = SUMMARY
    path = tmp_path / "pack.json"
    write_pack_record(path, pack_record([a, b], [a, b], [a], summaries={a: summary}))
    assert pack_summary([path], a) == summary
    assert pack_summary([path], b) is None
    (runs["a"] / "attempts.json").write_text('[{"best_val_loss": NaN}]')  # another's
    assert pack_summary([path], a) is None
    nan = {**summary, "attempts": [{"best_val_loss": float("nan")}]}
    write_pack_record(path, pack_record([a, b], [a, b], [a], summaries={a: nan}))
    got = pack_summary([path], a)  # NaN in both: the same attempts, the summary as sealed
    assert json.dumps(got, sort_keys=True) == json.dumps(nan, sort_keys=True)
    (runs["a"] / "attempts.json").write_text('[{"best_val')  # damaged
    assert pack_summary([path], a) is None
    (runs["a"] / "attempts.json").unlink()
    assert pack_summary([path], a) is None
    write_pack_record(path, pack_record([b], [b], [b]))
    assert pack_summary([path], b) is None
    with pytest.raises(MetricsError, match="not finished"):
        pack_record([a, b], [a, b], [a], summaries={b: summary})
    with pytest.raises(MetricsError, match="is a required property"):
        pack_record([a], [a], [a], summaries={a: {"cell": "c"}})


def test_a_summary_the_record_cannot_hold_names_its_run():
    assert sealable(SUMMARY, "r/a") == SUMMARY
    with pytest.raises(MetricsError, match=r"^r/a: its summary cannot be sealed: key "
                                           r"<root>: 'trained' is a required property"):
        sealable({k: v for k, v in SUMMARY.items() if k != "trained"}, "r/a")
