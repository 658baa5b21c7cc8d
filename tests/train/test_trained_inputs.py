"""A run is keyed by everything it trained on: its config and the sha256 of every input
file. Data made again from another seed retrains the cells that read it and only those;
evaluation never pairs weights with data they were not trained for. Tiny random Llama,
synthetic FRoG data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cells import tiny_cell
from dfil.cli import main
from dfil.data.synthetic import write_frog_like

pytestmark = pytest.mark.slow


def _frog(folder: Path, seed: int) -> Path:
    write_frog_like(folder, seed=seed, n_easy=48, n_hard=24)
    return folder


def _summary(run: Path) -> dict:
    return json.loads((run / "train_summary.json").read_text())


def test_a_data_seed_change_retrains_the_cells_that_read_it_and_only_those(tmp_path, capsys):
    changed, kept = _frog(tmp_path / "frog-a", 0), _frog(tmp_path / "frog-b", 0)
    cells = {"a": tiny_cell(tmp_path, changed, "a", epochs=1),
             "b": tiny_cell(tmp_path, kept, "b", epochs=1)}
    runs = {name: tmp_path / f"run-{name}" for name in cells}
    for name, cell in cells.items():
        assert main(["train", "--cell", str(cell), "--out", str(runs[name])]) == 0
        assert main(["evaluate", "--run", str(runs[name])]) == 0
    before = {name: (_summary(run), (run / "model.safetensors").stat().st_mtime_ns,
                     (run / "model.safetensors").read_bytes()) for name, run in runs.items()}
    old_easy = before["a"][0]["identity"]["inputs"]["data.source/easy.jsonl"]
    capsys.readouterr()

    _frog(changed, 1)  # the stand-in made again from another seed, at the same path
    new_easy = json.loads((changed / "dfil-sha256.json").read_text())["sha256"]["easy.jsonl"]
    assert new_easy != old_easy
    # Evaluation refuses the old weights on the new data, naming the file and both digests.
    assert main(["evaluate", "--run", str(runs["a"])]) == 2
    err = capsys.readouterr().err
    assert "trained on other inputs" in err
    assert f"data.source/easy.jsonl sha256 {old_easy[:12]} -> {new_easy[:12]}" in err

    for name, cell in cells.items():
        assert main(["train", "--cell", str(cell), "--out", str(runs[name])]) == 0
    out = capsys.readouterr().out
    summary = _summary(runs["a"])
    assert summary["retrained"]["because"] == [
        f"data.source/easy.jsonl sha256 {old_easy[:12]} -> {new_easy[:12]}",
        *summary["retrained"]["because"][1:]]
    assert any(w.startswith("data.source/hard.jsonl") for w in summary["retrained"]["because"])
    assert summary["identity"]["inputs"]["data.source/easy.jsonl"] == new_easy
    assert summary["attempts"][0]["identity"] == summary["identity"]
    assert summary["config_hash"] == before["a"][0]["config_hash"]
    assert (runs["a"] / "model.safetensors").read_bytes() != before["a"][2]
    moved = runs["a"] / summary["retrained"]["superseded"]
    assert (moved / "model.safetensors").read_bytes() == before["a"][2]
    assert (f"{runs['a']}: its outputs were trained on other inputs (data.source/easy.jsonl "
            f"sha256 {old_easy[:12]} -> {new_easy[:12]}; ") in out
    # The cell whose data did not change is not trained again.
    assert _summary(runs["b"]).get("retrained") is None
    assert (runs["b"] / "model.safetensors").stat().st_mtime_ns == before["b"][1]
    assert not (runs["b"] / "superseded").exists()

    assert main(["evaluate", "--run", str(runs["a"])]) == 0
    metrics = json.loads((runs["a"] / "metrics.json").read_text())
    assert metrics["identity"] == summary["identity"]


def test_the_checkpoint_and_resume_state_carry_the_identity(tmp_path):
    from dfil.engine.checkpoint import read_checkpoint

    run = tmp_path / "run"
    cell = tiny_cell(tmp_path, _frog(tmp_path / "frog", 0), "c", epochs=1)
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    meta = read_checkpoint(run / "model.safetensors")[2]
    assert meta["identity"] == _summary(run)["identity"]
    assert meta["identity"]["cell"] == "c"
