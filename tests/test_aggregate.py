import json

import pandas as pd
import pytest

from dfil.aggregate import (
    COLUMNS,
    aggregate,
    check_replaceable,
    flatten,
    metrics_files,
    parse_key,
)
from dfil.cli import main


def test_parse_key():
    k = parse_key("runs/frog/qwen2.5-7b/dfil+fewshot/lam0.5/n16/qure/seed42")
    assert k == {"task": "frog", "backbone": "qwen2.5-7b", "method": "dfil",
                 "variant": "fewshot", "lam": "0.5", "budget": "16", "init": "qure",
                 "seed": "42"}
    assert parse_key("sst5/phi/finetune/lamna/nfull/na/seed1")["variant"] == ""
    with pytest.raises(ValueError, match="not a run key"):
        parse_key("frog/qwen/dfil/seed42")


def test_flatten_hand_computed():
    tree = {"test": {"mf": {"acc": 0.5, "per_class_acc": [1.0, None]}}, "alpha": None,
            "csmc": {"mf": {"per_pair": [1, 0], "consistency": 0.9}}, "ok": True,
            "provenance": {"wall_seconds": 3.0}}
    assert dict(flatten(tree)) == {"test.mf.acc": 0.5, "test.mf.per_class_acc.0": 1.0,
                                   "csmc.mf.consistency": 0.9, "ok": 1.0}


def test_aggregate_and_cli(tmp_path, capsys):
    runs = tmp_path / "runs"
    for seed, acc in ((42, 0.5), (123, 0.25)):
        d = runs / f"frog/tiny/dfil/lam0.5/nfull/qure/seed{seed}"
        d.mkdir(parents=True)
        (d / "metrics.json").write_text(json.dumps({
            "test": {"mf": {"acc": acc}}, "config_hash": "abc",
            "provenance": {"package_version": "0.1.0", "git_commit": "deadbeef"},
            "train": {"attempts": [{}, {}]}}))
    table = aggregate(sorted(runs.rglob("metrics.json")), runs)
    acc = table[table.metric == "test.mf.acc"].sort_values("seed")
    assert acc["value"].tolist() == [0.25, 0.5] and acc["seed"].tolist() == ["123", "42"]
    assert set(table.loc[table.metric == "train.attempts", "value"]) == {2.0}
    assert (table["git_commit"] == "deadbeef").all()
    out = tmp_path / "agg" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    parquet, csv = pd.read_parquet(out), pd.read_csv(out.with_suffix(".csv"))
    assert len(parquet) == len(csv) == 4
    assert parquet["value"].tolist() == csv["value"].tolist()
    assert "4 rows from 2 runs" in capsys.readouterr().out


def _one_run(runs):
    d = runs / "frog/tiny/dfil/lam0.5/nfull/qure/seed42"
    d.mkdir(parents=True)
    (d / "metrics.json").write_text(json.dumps({"test": {"mf": {"acc": 0.5}}}))
    return d / "metrics.json"


def test_metrics_files_refuses_runs_that_match_nothing(tmp_path):
    with pytest.raises(ValueError, match=r"smkoe/runs: no such runs directory"):
        metrics_files(tmp_path / "smkoe" / "runs")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty: no run directory below it has a "
                                         r"metrics\.json"):
        metrics_files(tmp_path / "empty")
    found = _one_run(tmp_path / "runs")
    assert metrics_files(tmp_path / "runs") == [found]
    assert metrics_files(tmp_path / "elsewhere", [found]) == [found]


def test_check_replaceable_keeps_a_full_table(tmp_path):
    out = tmp_path / "metrics.parquet"
    empty = pd.DataFrame(columns=COLUMNS)
    check_replaceable(empty, out)  # nothing to lose
    full = aggregate([_one_run(tmp_path / "runs")], tmp_path / "runs")  # 2 rows
    full.to_parquet(out)
    with pytest.raises(ValueError, match=r"metrics\.parquet: refusing to replace its 2 rows "
                                         r"with an empty table"):
        check_replaceable(empty, out)
    check_replaceable(full, out)  # a table with rows may replace it


def test_aggregate_cli_with_a_mistyped_runs_keeps_the_table(tmp_path, capsys):
    runs = tmp_path / "results" / "smoke" / "runs"
    _one_run(runs)
    out = tmp_path / "results" / "smoke" / "aggregate" / "metrics.parquet"
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    before = out.read_bytes()
    typo = tmp_path / "results" / "smkoe" / "runs"
    assert main(["aggregate", "--runs", str(typo), "--out", str(out)]) == 2
    assert f"{typo}: no such runs directory" in capsys.readouterr().err
    assert out.read_bytes() == before
