import json

import pandas as pd
import pytest

from dfil.aggregate import aggregate, flatten, parse_key
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
