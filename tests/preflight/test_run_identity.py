"""Generated files and run directories that are not what the grid makes at their path,
found before the DAG is built: a hand-edited cell.yaml or grid.yaml is written again from
the grid; a run directory moved to another cell's path, a run trained before runs
recorded their inputs, and an evaluated run missing its predictions are moved aside for
the DAG to make again, one line each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dfil.config.grid import load_grid_files
from dfil.config.runkey import cell_name
from dfil.preflight.identity import foreign_runs, generated_files

SMOKE = Path(__file__).resolve().parents[2] / "config" / "smoke.yaml"
GRID = load_grid_files([SMOKE])
KEYS = sorted(k for k in GRID.cells if "/dfil/" in k)[:2]
IDENTITY = {"inputs_sha256": "0" * 64, "inputs": {}}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(workdir: Path, key: str, cell: str | None = None, **leave_out) -> Path:
    """A finished run directory of ``key`` whose files record ``cell`` (its own by
    default)."""
    cell = cell or cell_name(key)
    run = workdir / "results" / "smoke" / "runs" / key
    run.mkdir(parents=True)
    summary = {"cell": cell, "config_hash": "0123456789abcdef", "trained": True,
               "identity": {"cell": cell, "config_hash": "0123456789abcdef", **IDENTITY}}
    files = {"train_summary.json": json.dumps(summary),
             "metrics.json": json.dumps({"cell": cell, "config_hash": "0123456789abcdef"}),
             "predictions.parquet": "p", "mf.json": "{}"}
    for name, text in files.items():
        if name not in leave_out:
            (run / name).write_text(text)
    return run


def _dfil_grid_cell(key: str, out: Path) -> None:
    """What the DAG's cell_config job runs."""
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "dfil.cli", "grid", "cell", "--json",
                    GRID.cell_json(key), "--out", str(out)], check=True)


def test_a_hand_edited_cell_yaml_is_written_again_from_the_grid(workdir):
    key = KEYS[0]
    path = workdir / "results" / "smoke" / "runs" / key / "cell.yaml"
    _dfil_grid_cell(key, path)
    made = path.read_text()
    assert generated_files(GRID, workdir, apply=True) == []  # as the job wrote it
    data = yaml.safe_load(made)
    data["train"]["epochs"] += 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert generated_files(GRID, workdir, apply=False) == [
        f"dfil: {path}: not what the grid makes now (edited by hand, or the grid changed): "
        "a run that builds the DAG writes it again from the grid"]
    assert path.read_text() != made
    assert generated_files(GRID, workdir, apply=True) == [
        f"dfil: {path}: not what the grid makes now (edited by hand, or the grid changed): "
        "written again from the grid"]
    assert path.read_text() == made
    assert generated_files(GRID, workdir, apply=True) == []


def test_a_hand_edited_grid_yaml_is_written_again_from_the_grid(workdir):
    path = workdir / "results" / "smoke" / "grid.yaml"
    path.parent.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "dfil.cli", "grid", "resolve", "--json",
                    json.dumps(GRID.config, sort_keys=True), "--out", str(path)], check=True)
    made = path.read_text()
    assert generated_files(GRID, workdir, apply=True) == []
    path.write_text(made.replace("qwen2.5-7b: tiny-llama", "qwen2.5-7b: tiny-lama"))
    (note,) = generated_files(GRID, workdir, apply=True)
    assert note == (f"dfil: {path}: not what the grid makes now (edited by hand, or the grid "
                    "changed): written again from the grid")
    assert path.read_text() == made


def test_swapped_run_directories_are_both_moved_aside_naming_both_cells(workdir):
    a, b = KEYS
    runs = workdir / "results" / "smoke" / "runs"
    dirs = [_run(workdir, a, cell=cell_name(b)), _run(workdir, b, cell=cell_name(a))]
    notes = foreign_runs(GRID, runs, dirs, apply=True)
    assert notes == [
        f"dfil: {dirs[0] / 'train_summary.json'} records the run of cell {cell_name(b)}, but "
        f"its path is the run of cell {cell_name(a)}; moved to {dirs[0]}/damaged/, training "
        "the cell again",
        f"dfil: {dirs[1] / 'train_summary.json'} records the run of cell {cell_name(a)}, but "
        f"its path is the run of cell {cell_name(b)}; moved to {dirs[1]}/damaged/, training "
        "the cell again"]
    for run in dirs:
        assert sorted(p.name for p in (run / "damaged").iterdir()) == [
            "metrics.json", "mf.json", "predictions.parquet", "train_summary.json"]


def test_an_evaluated_run_without_its_predictions_is_evaluated_again(workdir):
    runs = workdir / "results" / "smoke" / "runs"
    run = _run(workdir, KEYS[0], **{"predictions.parquet": False})
    assert foreign_runs(GRID, runs, [run], apply=True) == [
        f"dfil: {run / 'metrics.json'} is there without predictions.parquet; moved to "
        f"{run}/damaged/, evaluating the run again from its checkpoint"]
    assert sorted(p.name for p in (run / "damaged").iterdir()) == ["metrics.json", "mf.json"]
    assert (run / "train_summary.json").is_file()
    assert foreign_runs(GRID, runs, [run], apply=True) == []  # nothing evaluated: no claim


def test_a_run_trained_before_runs_recorded_their_inputs_is_trained_again(workdir):
    runs = workdir / "results" / "smoke" / "runs"
    run = _run(workdir, KEYS[0])
    summary = json.loads((run / "train_summary.json").read_text())
    del summary["identity"]
    (run / "train_summary.json").write_text(json.dumps(summary))
    (note,) = foreign_runs(GRID, runs, [run], apply=False)
    assert note == (f"dfil: {run / 'train_summary.json'} records no input digests (trained "
                    "before runs recorded them): its weights cannot show what they were "
                    f"trained on; a run that builds the DAG moves them to {run}/damaged/, "
                    "training the cell again")
    assert not (run / "damaged").exists()


def test_the_grids_own_runs_are_left_alone(workdir):
    runs = workdir / "results" / "smoke" / "runs"
    dirs = [_run(workdir, key) for key in KEYS]
    assert foreign_runs(GRID, runs, dirs, apply=True) == []
    assert not any((run / "damaged").exists() for run in dirs)


def test_many_rewritten_cells_are_counted_in_one_line(workdir):
    runs = workdir / "results" / "smoke" / "runs"
    keys = sorted(GRID.cells)[:5]
    for key in keys:
        (runs / key).mkdir(parents=True)
        (runs / key / "cell.yaml").write_text("name: edited\n")
    notes = generated_files(GRID, workdir, apply=True)
    assert [n.split(": ")[1] for n in notes[:3]] == [str(runs / k / "cell.yaml")
                                                     for k in keys[:3]]
    assert notes[3] == (f"dfil: and 2 more generated files under {workdir}/results/smoke: "
                        "written again likewise")
    assert len(notes) == 4 and generated_files(GRID, workdir, apply=True) == []
