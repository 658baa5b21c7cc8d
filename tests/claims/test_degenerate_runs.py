"""Degenerate evidence from real runs: the tiny model trained and evaluated for two seeds
through `dfil train` / `dfil evaluate`, once where the seed cannot change a prediction
(zero-shot option scoring: nothing is trained, and the random backbone is built from its
own init seed) and once where it does (a fine-tuned head on frozen, standardised
features: its init and data order are seeded). The aggregate's per-run facts, the
degenerate check on them and the claim's verdict follow."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from claim_tables import stat, two_rows

from cells import tiny_cell
from dfil.claims import judge
from dfil.claims.degenerate import at_chance, check, no_evidence
from dfil.cli import main
from dfil.config.grid import load_grid_files
from dfil.contracts.predictions import digest
from dfil.data.synthetic import write_frog_like
from dfil.render.entries import Entry
from dfil.render.source import Source
from dfil.render.voiding import voiding

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ZERO = "frog/tiny-llama/zero_shot/lamna/nfull/na"
FT = "frog/tiny-llama/finetune/lamna/nfull/na"
SEEDS = (1, 2)
METRIC = "test.main.acc"


def _run(tmp: Path, frog: Path, cell_key: str, method: str, seed: int) -> Path:
    # named as the grid names the cell at this run directory's path
    path = tiny_cell(tmp, frog, f"{cell_key}/seed{seed}".replace("/", "_"), epochs=1, seed=seed)
    data = yaml.safe_load(path.read_text())
    data["model"]["method"] = method
    data["data"]["max_length"] = 512  # whole prompts (the longest is under 400 characters)
    if method != "zero_shot":
        # on the tiny random backbone a LoRA run predicts one class for every item; heads
        # on standardised frozen features tell the items apart
        data["model"].pop("lora")
        data["model"].update(adapter="none", heads={"feature_norm": "standardize"})
    path.write_text(yaml.safe_dump(data))
    run = tmp / "runs" / cell_key / f"seed{seed}"
    assert main(["train", "--cell", str(path), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    return run


@pytest.fixture(scope="module")
def grid_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("degenerate")
    frog = tmp / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    for key, method in ((ZERO, "zero_shot"), (FT, "finetune")):
        for seed in SEEDS:
            _run(tmp, frog, key, method, seed)
    out = tmp / "aggregate.parquet"
    assert main(["aggregate", "--runs", str(tmp / "runs"), "--out", str(out)]) == 0
    return tmp / "runs", pd.read_parquet(out)


def _test_labels(run: Path) -> np.ndarray:
    p = pd.read_parquet(run / "predictions.parquet")
    rows = p[p["set"] == "test"].sort_values("id", kind="stable")
    return rows["main_label"].to_numpy(dtype=np.int64)


def _fact(frame: pd.DataFrame, method: str, seed: int, fact: str) -> float:
    rows = frame[(frame["method"] == method) & (frame["seed"].astype(str) == str(seed))
                 & (frame["metric"] == f"pred.test.main.{fact}")]
    assert len(rows) == 1, (method, seed, fact)
    return float(rows["value"].iloc[0])


def test_the_aggregate_keeps_each_runs_prediction_facts(grid_runs):
    runs, frame = grid_runs
    for key, method in ((ZERO, "zero_shot"), (FT, "finetune")):
        for seed in SEEDS:
            labels = _test_labels(runs / key / f"seed{seed}")
            assert _fact(frame, method, seed, "digest") == digest(labels)
            assert _fact(frame, method, seed, "n") == labels.size
            assert _fact(frame, method, seed, "classes") == np.unique(labels).size
    # the seed changes nothing zero-shot and something once heads are trained
    zero = [_test_labels(runs / ZERO / f"seed{s}") for s in SEEDS]
    tuned = [_test_labels(runs / FT / f"seed{s}") for s in SEEDS]
    assert np.array_equal(*zero) and not np.array_equal(*tuned)
    assert _fact(frame, "zero_shot", 1, "digest") == _fact(frame, "zero_shot", 2, "digest")
    assert _fact(frame, "finetune", 1, "digest") != _fact(frame, "finetune", 2, "digest")


def _entry(source: Source, cell: str) -> Entry:
    reads = frozenset((f"{cell}/seed{s}", METRIC) for s in SEEDS)
    values = [source.value(f"{cell}/seed{s}", METRIC) for s in SEEDS]
    assert None not in values
    entry = stat(*(100 * v for v in values), cell=cell, seeds=SEEDS, metric=METRIC)
    return Entry(**{**entry.__dict__, "degenerate": source.degenerate(values, reads)})


def test_identical_seeds_mark_the_entry_and_one_class_or_chance_void_the_claim(grid_runs):
    runs, frame = grid_runs
    source = Source(load_grid_files([ROOT / "config" / "smoke.yaml"]), frame, check=check)
    zero, tuned = _entry(source, ZERO), _entry(source, FT)
    labels = _test_labels(runs / ZERO / "seed1")
    n = labels.size
    # the zero-shot scorer of a random backbone may also pick one option for every item
    one = f"one class for all {n} items in 2 of 2 runs; " if np.unique(labels).size == 1 \
        else ""
    marked = f"{one}identical predictions on all {n} items across 2 seeds"
    assert zero.degenerate in (marked, f"{marked}; {at_chance(zero.reads, source.value)}")
    # trained heads: several classes, different per seed, so evidence
    for s in SEEDS:
        assert np.unique(_test_labels(runs / FT / f"seed{s}")).size > 1
    # nothing about its predictions; the tiny model may sit at chance, which is said alone
    assert tuned.degenerate in ("", at_chance(tuned.reads, source.value))
    tuned = replace(tuned, degenerate="")  # the test below is about the seeds only

    # identical predictions alone are a fact of one side's spread; one class or a mean
    # at chance void the comparison
    [row] = judge([two_rows(zero, tuned, 40.0, 30.0)])
    if voiding(zero.degenerate):
        assert row["verdict"] == "not comparable" and row["p_holm"] is None
        assert row["reason"] == no_evidence(f"a: {voiding(zero.degenerate)}")
    else:
        assert row["verdict"] != "not comparable"
    # the fine-tuned side against a hand-made one that differs by seed: tested
    other = stat(1.0, 4.0, cell="frog/tiny-llama/coral/lamna/nfull/na", seeds=SEEDS)
    [clean] = judge([two_rows(tuned, other, 40.0, 30.0)])
    assert clean["verdict"] != "not comparable" and clean["p"] is not None, clean
    assert "degenerate" not in clean["reason"]
