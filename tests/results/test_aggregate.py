import json

import pandas as pd
import pytest

from dfil.cli import main
from dfil.errors import MetricsError, MissingInputError, RefusedError
from dfil.results.aggregate import COLUMNS, aggregate, check_replaceable, metrics_files
from records import metrics_record


def write_run(runs, seed, acc, **overrides):
    d = runs / f"frog/tiny/dfil/lam0.5/nfull/qure/seed{seed}"
    d.mkdir(parents=True)
    record = metrics_record(**overrides)
    record["test"]["mf"]["acc"] = acc
    (d / "metrics.json").write_text(json.dumps(record))
    return d


def test_aggregate_rows_hand_computed(tmp_path):
    runs = tmp_path / "runs"
    for seed, acc in ((42, 0.5), (123, 0.25)):
        write_run(runs, seed, acc)
    table = aggregate(sorted(runs.rglob("metrics.json")), runs)
    acc = table[table.metric == "test.mf.acc"].sort_values("seed")
    assert acc["value"].tolist() == [0.25, 0.5] and acc["seed"].tolist() == ["123", "42"]
    one = table[table.seed == "42"].set_index("metric")["value"].to_dict()
    # Measurements only: the contract's descriptive subtrees (train, provenance, seed,
    # per_pair) are not rows; train.attempts is added as a count.
    assert one == {"alpha": 0.5, "test.mf.acc": 0.5, "test.mf.per_class_acc.0": 1.0,
                   "test.mf.n": 4.0, "val.mf.acc": 0.25, "val.mf.per_class_acc.0": 0.5,
                   "val.mf.per_class_acc.1": 0.0, "val.mf.n": 4.0,
                   "data.counts.train.0": 3.0, "data.counts.train.1": 1.0,
                   "data.counts.val.0": 2.0, "data.counts.val.1": 2.0,
                   "data.counts.test.0": 2.0, "data.counts.test.1": 2.0,
                   "data.total.train": 4.0, "data.total.val": 4.0, "data.total.test": 4.0,
                   "csmc.mf.consistency": 0.9, "csmc.mf.by_domain.finance": 1.0,
                   "train.attempts": 2.0}
    assert (table["git_commit"] == "deadbeef").all()
    assert set(table["variant"]) == {""} and set(table["lam"]) == {"0.5"}


def test_aggregate_refuses_a_file_that_breaks_the_contract(tmp_path):
    runs = tmp_path / "runs"
    d = write_run(runs, 42, 0.5)
    record = json.loads((d / "metrics.json").read_text())
    record["test"]["mf"]["acc"] = 1.5
    (d / "metrics.json").write_text(json.dumps(record))
    with pytest.raises(MetricsError, match=r"seed42/metrics.json: metrics key test.mf.acc"):
        aggregate([d / "metrics.json"], runs)


def test_aggregate_cli(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed, acc in ((42, 0.5), (123, 0.25)):
        write_run(runs, seed, acc)
    out = tmp_path / "agg" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    parquet, csv = pd.read_parquet(out), pd.read_csv(out.with_suffix(".csv"))
    assert len(parquet) == len(csv) == 40
    assert parquet["value"].tolist() == csv["value"].tolist()
    assert "40 rows from 2 runs" in capsys.readouterr().out


def test_metrics_files_refuses_runs_that_match_nothing(tmp_path):
    with pytest.raises(MissingInputError, match=r"smkoe/runs: no such runs directory"):
        metrics_files(tmp_path / "smkoe" / "runs")
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingInputError, match=r"empty: no run directory below it has a "
                                                r"metrics\.json"):
        metrics_files(tmp_path / "empty")
    found = write_run(tmp_path / "runs", 42, 0.5) / "metrics.json"
    assert metrics_files(tmp_path / "runs") == [found]
    assert metrics_files(tmp_path / "elsewhere", [found]) == [found]


def test_check_replaceable_keeps_a_full_table(tmp_path):
    out = tmp_path / "metrics.parquet"
    empty = pd.DataFrame(columns=COLUMNS)
    check_replaceable(empty, out)  # nothing to lose
    full = aggregate([write_run(tmp_path / "runs", 42, 0.5) / "metrics.json"],
                     tmp_path / "runs")
    full.to_parquet(out)
    with pytest.raises(RefusedError, match=rf"metrics\.parquet: refusing to replace its "
                                           rf"{len(full)} rows with an empty table"):
        check_replaceable(empty, out)
    check_replaceable(full, out)  # a table with rows may replace it


def test_aggregate_cli_with_a_mistyped_runs_keeps_the_table(tmp_path, capsys):
    runs = tmp_path / "results" / "smoke" / "runs"
    write_run(runs, 42, 0.5)
    out = tmp_path / "results" / "smoke" / "aggregate" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    before = out.read_bytes()
    typo = tmp_path / "results" / "smkoe" / "runs"
    assert main(["aggregate", "--runs", str(typo), "--out", str(out)]) == 2
    assert f"{typo}: no such runs directory" in capsys.readouterr().err
    assert out.read_bytes() == before
