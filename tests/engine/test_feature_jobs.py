"""Frozen features as jobs of their own: which cells share an item set, the item sets
each stage reads, and `dfil features` filling the cache that train then only reads."""

from __future__ import annotations

import json

import pytest
import yaml

from cells import tiny_cell
from dfil.cli import main
from dfil.config.cell import load_cell, to_dict
from dfil.data.synthetic import write_frog_like
from dfil.engine.features import REQUIRE_CACHED, feature_paths, item_prompts
from dfil.engine.featuresets import feature_group, feature_jobs, item_sets, reads_features


def _config(tmp_path, name="c", method="dfil", budget=None, seed=1, task="frog", **data):
    path = tiny_cell(tmp_path, tmp_path / "frog", name, seed=seed)
    raw = yaml.safe_load(path.read_text())
    raw["model"].update(method=method, adapter="none")
    raw["data"].update(budget=budget, task=task, **data)
    raw["eval"]["probes"] = True
    path.write_text(yaml.safe_dump(raw))
    return to_dict(load_cell(path))


def test_stages_read_their_item_sets(tmp_path):
    frog = _config(tmp_path)
    assert reads_features(frog)
    assert item_sets(frog, "train") == ("train", "val")
    assert item_sets(frog, "evaluate") == ("val", "test", "probes")  # no qure_source
    assert item_sets(_config(tmp_path, qure_source="q.jsonl"), "evaluate")[-1] == "qure"
    ordinal = _config(tmp_path, task="ordinal_standin")
    assert item_sets(ordinal) == ("train", "val", "test")
    zero = _config(tmp_path, method="zero_shot")  # option scoring: no features
    assert not reads_features(zero) and item_sets(zero) == ()
    lora = dict(frog, model={**frog["model"], "adapter": "lora"})
    assert item_sets(lora) == ()


def test_cells_share_a_group_across_methods_seeds_and_budgets(tmp_path):
    base = _config(tmp_path, "a")
    same = [_config(tmp_path, "b", method="coral", seed=7),
            _config(tmp_path, "c", budget=16, fewshot_seed=3)]
    assert {feature_group(c) for c in same} == {feature_group(base)}
    assert feature_group(base).startswith("tiny-llama-") and len(feature_group(base)) == 23
    other = [_config(tmp_path, "d", task="ordinal_standin"),
             _config(tmp_path, "e", max_length=64), _config(tmp_path, "f", prompt="compact")]
    assert len({feature_group(c) for c in [base, *other]}) == 4
    jobs = feature_jobs({"k2": base, "k1": same[0], "k3": other[0]})
    group = feature_group(base)
    assert jobs == {f"{group}/train": "k1", f"{group}/val": "k1", f"{group}/test": "k1",
                    f"{group}/probes": "k1",
                    **{f"{feature_group(other[0])}/{n}": "k3" for n in ("train", "val", "test")}}


@pytest.mark.slow
def test_features_job_fills_what_training_reads(tmp_path, monkeypatch, capsys):
    write_frog_like(tmp_path / "frog", seed=0, n_easy=48, n_hard=16)
    monkeypatch.setenv("DFIL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DFIL_PROGRESS", "0")
    path = tiny_cell(tmp_path, tmp_path / "frog", "few", epochs=1)
    raw = yaml.safe_load(path.read_text())
    raw["model"]["adapter"] = "none"
    raw["data"]["budget"] = 8
    path.write_text(yaml.safe_dump(raw))
    cell = load_cell(path)
    # The pool's 38 training items (48 easy, 80% train), not the 8 of the budget.
    assert [len(p) for p in item_prompts(cell, "train")] == [38]

    monkeypatch.setenv(REQUIRE_CACHED, "1")
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "run0")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not cached" in err and "dfil features" in err

    for items in ("train", "val"):
        stamp = tmp_path / f"{items}.json"
        assert main(["features", "--json", json.dumps(to_dict(cell)), "--items", items,
                     "--stamp", str(stamp)]) == 0
        record = json.loads(stamp.read_text())
        assert record["computed"] == 1 and record["prompts"] == [38 if items == "train" else 10]
        assert all(f.is_file() for f in feature_paths(cell, item_prompts(cell, items)[0]))
    again = tmp_path / "again.json"
    assert main(["features", "--json", json.dumps(to_dict(cell)), "--items", "val",
                 "--stamp", str(again)]) == 0
    assert json.loads(again.read_text())["computed"] == 0
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "run")]) == 0
    assert main(["features", "--json", json.dumps(to_dict(cell)), "--items", "qure",
                 "--stamp", str(again)]) == 2
    # A cached file damaged (garbled past its header): named in one line, removed with
    # its pair, and computed again by the next features job, never a traceback.
    path_val = feature_paths(cell, item_prompts(cell, "val")[0])[0]
    data = bytearray(path_val.read_bytes())
    data[8:16] = b"\x00" * 8  # the JSON header's first bytes
    path_val.write_bytes(bytes(data))
    capsys.readouterr()
    assert main(["train", "--cell", str(path), "--out", str(tmp_path / "run2")]) == 2
    err = capsys.readouterr().err
    assert f"{path_val}: damaged frozen-feature file" in err and "not cached" in err
    assert "Traceback" not in err and not path_val.exists()
    assert main(["features", "--json", json.dumps(to_dict(cell)), "--items", "val",
                 "--stamp", str(again)]) == 0
    assert json.loads(again.read_text())["computed"] == 1 and path_val.is_file()
