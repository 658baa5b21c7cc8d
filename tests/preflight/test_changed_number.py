"""A number changed inside metrics.json after evaluation wrote it is caught: by its
content digest, and, with the digest recomputed to match, by the numbers that
predictions.parquet determines; preflight moves the run's evaluation aside (one line) and
the aggregate never turns it into a row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dfil.contracts.metrics import digest, read_metrics, write_metrics
from dfil.contracts.predcheck import accuracy_block, predictions_problem
from dfil.preflight.damage import repair_runs
from dfil.results.aggregate import aggregate
from dfil.util.errors import MetricsError
from records import metrics_record

KEY = "frog/tiny/dfil/lam0.5/nfull/qure/seed42"
GOLD = np.array([0, 0, 1, 1, 2, 2, 0])
MF = np.array([0, 1, 1, 1, 2, 0, 0])
P = np.array([0.1, 0.2, 0.45, 0.5, 0.8, 0.9, 0.15])
P_HAT = np.array([0.12, 0.3, 0.4, 0.52, 0.7, 0.6, 0.1], dtype=np.float32)
ACC = float((MF == GOLD).mean())  # 5 / 7


def write_run(runs: Path) -> Path:
    """A run directory whose metrics.json was computed from its predictions.parquet."""
    run = runs / KEY
    run.mkdir(parents=True)
    n = len(GOLD)
    pd.DataFrame({"set": "test", "id": [f"t{i}" for i in range(n)], "gold": GOLD,
                  "p_true": P, "p_hat": P_HAT, "main_label": np.full(n, -1),
                  "mf_label": MF, "ensemble_label": np.full(n, -1)}).to_parquet(
        run / "predictions.parquet", index=False)
    block = accuracy_block(MF, GOLD, P, 3)
    record = metrics_record(test={"mf": block, "best": block}, best_path="mf",
                            p_mae=float(np.abs(P_HAT - P).mean()))
    write_metrics(run / "metrics.json", record)
    return run


def edit_one_digit(path: Path) -> str:
    """``test.mf.acc`` with one digit (its second decimal, or its first) changed, as a
    hand edit would (0.434... -> 0.484...); returns the key."""
    text = path.read_text()
    value = repr(json.loads(text)["test"]["mf"]["acc"])
    i = 3 if len(value) > 3 else 2
    new = value[:i] + str((int(value[i]) + 5) % 10) + value[i + 1:]
    at = text.index(f'"acc": {value}', text.index('"mf": {', text.index('"test": {')))
    path.write_text(text[:at] + f'"acc": {new}' + text[at + len(f'"acc": {value}'):])
    assert json.loads(path.read_text())["test"]["mf"]["acc"] == float(new)
    return "test.mf.acc"


def redigest(path: Path) -> None:
    record = json.loads(path.read_text())
    record["digest"] = digest(record)
    path.write_text(json.dumps(record, indent=2, sort_keys=True))


def test_an_intact_run_reads_and_aggregates(tmp_path):
    run = write_run(tmp_path / "runs")
    metrics = read_metrics(run / "metrics.json")
    assert predictions_problem(metrics, run / "predictions.parquet") is None
    assert repair_runs([(run, False)]) == []
    table = aggregate([run / "metrics.json"], tmp_path / "runs")
    assert table.set_index("metric").loc["test.mf.acc", "value"] == ACC


def test_one_digit_changed_is_caught_by_the_digest(tmp_path):
    run = write_run(tmp_path / "runs")
    edit_one_digit(run / "metrics.json")
    with pytest.raises(MetricsError, match="content digest mismatch"):
        read_metrics(run / "metrics.json")
    with pytest.raises(MetricsError, match="content digest mismatch"):
        aggregate([run / "metrics.json"], tmp_path / "runs")
    (note,) = repair_runs([(run, False)])
    assert note.startswith(f"dfil: {run / 'metrics.json'}: damaged (content digest mismatch")
    assert note.endswith("re-evaluating the run from its checkpoint") and "\n" not in note
    assert sorted(p.name for p in (run / "damaged").iterdir()) == [
        "metrics.json", "predictions.parquet"]  # what evaluation writes (no mf.json here)


def test_one_digit_changed_with_the_digest_redone_is_caught_by_the_predictions(tmp_path):
    run = write_run(tmp_path / "runs")
    key = edit_one_digit(run / "metrics.json")
    redigest(run / "metrics.json")
    metrics = read_metrics(run / "metrics.json")  # the digest alone no longer tells
    problem = predictions_problem(metrics, run / "predictions.parquet")
    assert problem.startswith(f"{key} is {metrics['test']['mf']['acc']} but "
                              f"predictions.parquet gives {ACC}")
    with pytest.raises(MetricsError, match=f"metrics.json: {key} is "):
        aggregate([run / "metrics.json"], tmp_path / "runs")
    (note,) = repair_runs([(run, False)])
    assert f"damaged ({key} is " in note and "\n" not in note
    assert not (run / "metrics.json").exists() and (run / "damaged" / "metrics.json").exists()


@pytest.mark.parametrize("edit", [
    lambda m: m["test"]["mf"].update(n=8),
    lambda m: m["test"]["mf"]["per_class_acc"].__setitem__(2, 1.0),
    lambda m: m["test"]["mf"].update(mono_violations=m["test"]["mf"]["mono_violations"] + 1),
    lambda m: m["test"]["best"].update(acc=1.0),
    lambda m: m.update(p_mae=m["p_mae"] * (1 + 1e-9)),
])
def test_every_number_the_predictions_determine_is_compared(tmp_path, edit):
    run = write_run(tmp_path / "runs")
    metrics = read_metrics(run / "metrics.json")
    edit(metrics)
    assert predictions_problem(metrics, run / "predictions.parquet") is not None


def test_a_few_ulps_are_no_change(tmp_path):
    run = write_run(tmp_path / "runs")
    metrics = read_metrics(run / "metrics.json")
    metrics["test"]["mf"]["acc"] = float(np.nextafter(ACC, 1))
    metrics["p_mae"] = float(np.nextafter(metrics["p_mae"], 0))
    assert predictions_problem(metrics, run / "predictions.parquet") is None


def test_a_file_without_a_digest_is_re_evaluated(tmp_path):
    run = write_run(tmp_path / "runs")
    record = json.loads((run / "metrics.json").read_text())
    del record["digest"]
    (run / "metrics.json").write_text(json.dumps(record))
    with pytest.raises(MetricsError, match="no content digest"):
        read_metrics(run / "metrics.json")
    (note,) = repair_runs([(run, False)])
    assert "damaged (no content digest" in note and "re-evaluating the run" in note


@pytest.mark.slow  # trains a cell
def test_a_changed_number_in_a_real_run_is_re_evaluated_to_what_it_was(tmp_path):
    from cells import stable, tiny_cell
    from dfil.cli import main
    from dfil.data.synthetic import write_frog_like

    write_frog_like(tmp_path / "frog", seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, tmp_path / "frog", "changed", epochs=1)
    run = tmp_path / "runs" / KEY
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    good = stable(read_metrics(run / "metrics.json"))
    shutil.copytree(run, tmp_path / "copy")
    for redo in (False, True):
        key = edit_one_digit(run / "metrics.json")
        if redo:
            redigest(run / "metrics.json")
        (note,) = repair_runs([(run, True)])
        assert (f"damaged ({key} is " if redo else "damaged (content digest mismatch") in note
        assert note.endswith("re-evaluating the run from its checkpoint")
        shutil.rmtree(run / "damaged")
        assert main(["evaluate", "--run", str(run)]) == 0  # what the DAG then runs
        assert stable(read_metrics(run / "metrics.json")) == good
        assert repair_runs([(run, True)]) == []


def test_a_nan_written_into_metrics_json_is_one_line_of_damage(tmp_path, capsys):
    from dfil.cli import main

    run = write_run(tmp_path / "runs")
    text = (run / "metrics.json").read_text()
    value = repr(json.loads(text)["p_mae"])
    (run / "metrics.json").write_text(text.replace(f'"p_mae": {value}', '"p_mae": NaN'))
    assert main(["aggregate", "--runs", str(tmp_path / "runs"),
                 "--out", str(tmp_path / "m.parquet")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dfil aggregate: error: {run / 'metrics.json'}: non-finite "
                          "metric p_mae = nan") and err.count("\n") == 1
    (note,) = repair_runs([(run, False)])
    assert note.startswith(f"dfil: {run / 'metrics.json'}: damaged (non-finite number "
                           "p_mae = nan, which evaluation never writes); moved to")
    assert (run / "damaged" / "metrics.json").exists()
