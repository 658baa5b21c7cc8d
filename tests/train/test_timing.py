"""The acceptance run's timed steps (dfil.train.timing) and `dfil acceptance`, which
records them (a tiny random Llama on this machine's CPU)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch

from cells import run_cli, tiny_cell
from dfil.config.cell import load_cell
from dfil.config.grid import Grid
from dfil.contracts.acceptance import read_acceptance, write_acceptance
from dfil.train.timing import Timing, prompt_tokens, random_prompts
from dfil.util.errors import ConfigError, MetricsError
from test_grid import smoke


def test_prompt_tokens_is_the_tasks_mean_cut_to_max_length(tmp_path):
    cell = load_cell(tiny_cell(tmp_path, tmp_path))  # frog: 142.5 tokens, max_length 128
    assert prompt_tokens(cell) == 128.0
    longer = cell.model_copy(update={"data": cell.data.model_copy(update={"max_length": 256})})
    assert prompt_tokens(longer) == 142.5


def test_random_prompts_lengths_ids_and_labels():
    enc = random_prompts(200, 96, 40.0, 8, seed=0)
    assert len(enc) == 200
    assert enc.lengths.min() >= 8 and enc.lengths.max() <= 80
    assert 30 < enc.lengths.mean() < 50
    ids = np.concatenate([np.asarray(i) for i in enc.ids])
    assert ids.min() >= 3 and ids.max() < 96
    assert set(enc.labels) <= set(range(8))


def test_timing_rates():
    t = Timing(steps=10, batch=8, seconds=4.0, tokens=9600, layout="padded",
               peak_gpu_gib=None)
    assert (t.tokens_per_s, t.steps_per_s) == (2400.0, 2.5)


def test_the_record_is_checked_when_written_and_read(tmp_path):
    with pytest.raises(MetricsError, match=r"r.json: acceptance record key <root>: '\w+' "
                                           "is a required property"):
        write_acceptance(tmp_path / "r.json", {"backbone": "x"})
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(MetricsError, match=r"bad.json: not a readable acceptance record .*"
                                           r"run `snakemake acceptance` again"):
        read_acceptance(tmp_path / "bad.json")


def test_the_grids_acceptance_section_names_its_cell_and_backbone():
    config = copy.deepcopy(smoke())
    config["acceptance"] = {"cell": "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42",
                            "qlora": "tiny-llama"}
    runs = Grid(config).acceptance()
    assert runs["cell"] == ("frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42", "tiny-llama")
    assert runs["qlora"][1] == "tiny-llama" and "/dfil" in runs["qlora"][0]
    config["acceptance"]["cell"] = "frog/tiny-llama/dfil/lam9/nfull/qure/seed42"
    with pytest.raises(ConfigError, match="acceptance.cell: 'frog/tiny-llama/dfil/lam9/"
                                          "nfull/qure/seed42' is not a cell of this grid"):
        Grid(config)
    config["acceptance"] = {"cell": runs["cell"][0], "qlora": "qwen2.5-72b"}
    with pytest.raises(ConfigError, match="acceptance.qlora: 'qwen2.5-72b' is no backbone "
                                          "of this grid's cells"):
        Grid(config)
    del config["acceptance"]
    assert Grid(config).acceptance() == {}


@pytest.mark.slow
def test_dfil_acceptance_records_the_tiny_models_steps(tmp_path):
    cell = tiny_cell(tmp_path, tmp_path)
    out = tmp_path / "acceptance/cell/tiny-llama.json"
    done = run_cli("acceptance", "--cell", cell, "--kind", "cell", "--steps", "3",
                   "--out", out)
    assert done.returncode == 0, done.stderr[-2000:]
    record = read_acceptance(out)
    assert (record["status"], record["kind"], record["steps"], record["batch"]) == (
        "measured", "cell", 3, 8)
    assert record["steps_per_s"] == pytest.approx(3 / record["seconds"])
    assert record["arch"]["hidden_size"] == 32 and record["prompt_tokens"] == 128.0
    assert record["device"].startswith("cpu") and record["gpu"] is None
    assert len(record["trainer_commit"]) in (40, 7)  # a commit, or "unknown" outside git
    assert f"acceptance cell tiny-llama on {record['device']}" in done.stdout
    if torch.cuda.is_available():
        return
    qlora = tmp_path / "acceptance/qlora/tiny-llama.json"
    done = run_cli("acceptance", "--cell", cell, "--kind", "qlora", "--out", qlora)
    assert done.returncode == 0, done.stderr[-2000:]
    skipped = json.loads(qlora.read_text())
    assert (skipped["status"], skipped["quantized"]) == ("skipped", True)
    assert skipped["reason"].startswith("no CUDA")
    assert "tokens_per_s" not in skipped


def test_the_cell_records_run_says_whether_it_trained_and_evaluated(tmp_path):
    from dfil.cli.acceptance import _run_info
    from dfil.contracts.failure import failure_record
    from dfil.util.errors import RunFileError

    run = tmp_path / "run"
    run.mkdir()
    assert _run_info(run) == {"dir": str(run), "train_seconds": None, "evaluated": False}
    (run / "train_summary.json").write_text(json.dumps({"provenance": {"wall_seconds": 61.5}}))
    (run / "metrics.json").write_text(json.dumps({"test": {}}))
    assert _run_info(run) == {"dir": str(run), "train_seconds": 61.5, "evaluated": True}
    failed = failure_record("c", "0" * 16, {"reason": "OOM", "stage": "evaluate",
                                            "message": "m", "log": "l", "attempt": 3})
    (run / "metrics.json").write_text(json.dumps(failed))
    assert _run_info(run)["evaluated"] is False
    (run / "metrics.json").write_text("{")
    with pytest.raises(RunFileError, match=r"metrics.json: unreadable run file .*run "
                                           r"`snakemake acceptance` again"):
        _run_info(run)
