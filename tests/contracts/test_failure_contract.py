"""The failure record (dfil.contracts.failure): what a cell that gave up on its last try
writes in place of its outputs; read back through read_metrics and the aggregate."""

from __future__ import annotations

import pytest

from dfil.contracts.failure import failure_record, is_failure, write_failure
from dfil.contracts.metrics import read_metrics
from dfil.results.aggregate import run_rows
from dfil.util.errors import MetricsError

KEY = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"


def record(**overrides) -> dict:
    args = {"reason": "OOM", "stage": "train", "message": "CUDA out of\n memory",
            "log": "results/smoke/logs/train/x.log", "attempt": 3, **overrides}
    return failure_record("cell", "0" * 16, args)


def test_a_record_names_reason_stage_log_and_attempt():
    r = record()
    assert is_failure(r)
    assert r["failed"]["reason"] == "OOM"
    assert r["failed"]["message"] == "CUDA out of memory"  # one line
    assert r["failed"]["log"].endswith("x.log")
    assert r["failed"]["attempt"] == 3


def test_every_reason_the_code_records_is_one_the_schema_allows():
    from dfil.contracts.failure import DETERMINISTIC, REASONS, schema

    enum = schema()["properties"]["failed"]["properties"]["reason"]["enum"]
    assert list(REASONS) == enum and set(DETERMINISTIC) <= set(REASONS)
    assert record(reason="non-finite loss")["failed"]["reason"] == "non-finite loss"


def test_an_unknown_reason_is_refused_by_the_schema():
    with pytest.raises(MetricsError, match="failure record key failed.reason"):
        record(reason="tired")


def test_a_recorded_failure_is_one_failed_row_of_the_aggregate(tmp_path):
    run = tmp_path / "runs" / KEY
    run.mkdir(parents=True)
    write_failure(run / "metrics.json", record(reason="TIMEOUT"))
    with pytest.raises(MetricsError):
        read_metrics(run / "metrics.json")  # a failure is not a metrics record
    assert read_metrics(run / "metrics.json", allow_failure=True)["failed"]["reason"] == \
        "TIMEOUT"
    rows = run_rows(run / "metrics.json", tmp_path / "runs")
    assert [(r["metric"], r["value"]) for r in rows] == [("failed.TIMEOUT", 1.0)]


def test_the_last_attempt_is_named_only_with_keep_going(monkeypatch):
    from dfil.cli.jobs import LAST, last_try, set_last_attempt

    monkeypatch.setenv(LAST, "0")  # recorded, so the variable is restored afterwards
    monkeypatch.delenv(LAST)
    set_last_attempt(False, 2)
    assert not last_try(3)  # without keep-going a failure stays a failure
    set_last_attempt(True, 2)
    assert [last_try(a) for a in (1, 2, 3)] == [False, False, True]


def test_a_failure_record_is_not_a_damaged_file_for_preflight(tmp_path):
    """A cell that gave up keeps its record: preflight's damage check (which moves damaged
    run files aside so the DAG makes them again) leaves it, so the failed cell is not
    rerun on every invocation."""
    from dfil.preflight.damage import file_problem, repair_runs

    run = tmp_path / "run"
    run.mkdir()
    write_failure(run / "train_summary.json", record(reason="OOM"))
    write_failure(run / "metrics.json", record(reason="OOM", stage="evaluate"))
    assert file_problem(run / "metrics.json") is None
    assert repair_runs([(run, True)]) == []
    assert sorted(p.name for p in run.iterdir()) == ["metrics.json", "train_summary.json"]


def test_failure_ahead_reads_a_refused_stamp_or_a_failed_training(tmp_path):
    """A job's inputs tell whether it will only record a failure: a fetch stamp holding
    the hub's refusal gives 'gated', a failed training's summary its own reason; a good
    stamp, an absent file, a file that is not JSON, or no JSON at all give None."""
    import json

    from dfil.contracts.failure import failure_ahead

    good = tmp_path / "hub" / "tiny.json"
    good.parent.mkdir()
    good.write_text(json.dumps({"repo": "org/tiny", "commit": "a" * 40, "files": {}}))
    refused = tmp_path / "hub" / "gated.json"
    refused.write_text(json.dumps({"repo": "org/gated", "gated": "backbone x is gated"}))
    summary = tmp_path / "train_summary.json"
    write_failure(summary, record(reason="non-finite loss", attempt=1))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    absent = tmp_path / "absent.json"
    manifest = tmp_path / "cell.yaml"
    manifest.write_text("failed: {reason: OOM}\n")  # not JSON: never read

    assert failure_ahead([]) is None
    assert failure_ahead([str(good), str(absent), str(broken), str(manifest)]) is None
    assert failure_ahead([good, refused]) == "gated"
    assert failure_ahead([str(summary), str(good)]) == "non-finite loss"
    assert failure_ahead([refused, summary]) == "gated"  # the first one decides
    assert failure_ahead([summary, refused]) == "non-finite loss"
