"""Damaged run files found before the DAG is built, moved aside, and re-created by what
produced them: evaluation from the checkpoint, training when the checkpoint is damaged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cells import stable, tiny_cell
from dfil.cli import main
from dfil.cluster.writer import hold_writer
from dfil.data.synthetic import write_frog_like
from dfil.preflight.damage import file_problem, repair_runs

pytestmark = pytest.mark.slow  # trains a cell


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """One tiny cell trained and evaluated (1 epoch)."""
    tmp = tmp_path_factory.mktemp("trained")
    frog = tmp / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp, frog, "damage", epochs=1)
    assert main(["train", "--cell", str(cell), "--out", str(tmp / "run")]) == 0
    assert main(["evaluate", "--run", str(tmp / "run")]) == 0
    return tmp / "run"


@pytest.fixture
def run(tmp_path, trained) -> Path:
    shutil.copytree(trained, tmp_path / "run")
    return tmp_path / "run"


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def test_intact_run_files_are_left_alone(run):
    assert repair_runs([(run, True)]) == []
    assert not (run / "damaged").exists()
    assert file_problem(run / "absent.json") is None


def test_a_truncated_metrics_file_is_moved_aside_and_re_evaluated(run, trained):
    truncate(run / "metrics.json")
    (note,) = repair_runs([(run, True)])
    assert note.startswith(f"dfil: {run / 'metrics.json'}: damaged (unreadable: ")
    assert note.endswith(f"moved to {run}/damaged/, re-evaluating the run from its checkpoint")
    assert "\n" not in note
    assert not (run / "metrics.json").exists() and (run / "damaged" / "metrics.json").exists()
    assert (run / "model.safetensors").exists() and (run / "train_summary.json").exists()
    assert main(["evaluate", "--run", str(run)]) == 0  # what the DAG then runs
    assert stable(json.loads((run / "metrics.json").read_text())) == stable(
        json.loads((trained / "metrics.json").read_text()))


@pytest.mark.parametrize("name,damage", [
    ("predictions.parquet", truncate),
    ("mf.json", lambda p: p.write_text("[]")),
    ("mf.json", lambda p: p.write_bytes(b"\xff\xfe")),
])
def test_every_evaluation_file_is_checked(run, name, damage):
    damage(run / name)
    (note,) = repair_runs([(run, True)])
    assert f"{run / name}: damaged (" in note and "re-evaluating" in note
    # All three go: Snakemake would delete the others before re-evaluating anyway.
    assert sorted(p.name for p in (run / "damaged").iterdir()) == [
        "metrics.json", "mf.json", "predictions.parquet"]


def test_a_damaged_checkpoint_too_means_training_again(run, trained):
    truncate(run / "mf.json")
    truncate(run / "model.safetensors")
    (note,) = repair_runs([(run, True)])
    assert "its checkpoint is damaged too (" in note
    assert note.endswith("retraining the cell from scratch")
    moved = {p.name for p in (run / "damaged").iterdir()}
    assert {"model.safetensors", "train_summary.json", "train_log.jsonl", "mf.json",
            "metrics.json", "predictions.parquet"} <= moved
    cell = run / "cell.yaml"
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    assert (run / "model.safetensors").read_bytes() == (
        trained / "model.safetensors").read_bytes()
    assert stable(json.loads((run / "metrics.json").read_text())) == stable(
        json.loads((trained / "metrics.json").read_text()))


def test_a_damaged_training_summary_is_written_again_without_training(run, trained, capsys):
    (run / "train_summary.json").write_text('{"cell": ')
    assert main(["evaluate", "--run", str(run)]) == 2  # by hand: one line, no traceback
    err = capsys.readouterr().err
    assert "train_summary.json: unreadable run file (" in err and err.count("\n") == 1
    (note,) = repair_runs([(run, True)])
    assert "dfil train writes it again from the recorded attempts" in note
    assert [p.name for p in (run / "damaged").iterdir()] == ["train_summary.json"]
    assert (run / "metrics.json").exists()  # kept until the rebuild replaces it
    log = (run / "train_log.jsonl").read_bytes()
    assert main(["train", "--cell", str(run / "cell.yaml"), "--out", str(run)]) == 0
    assert (run / "train_log.jsonl").read_bytes() == log
    assert main(["evaluate", "--run", str(run)]) == 0
    assert stable(json.loads((run / "metrics.json").read_text())) == stable(
        json.loads((trained / "metrics.json").read_text()))


def test_a_dry_run_only_says_what_it_would_do(run):
    truncate(run / "metrics.json")
    (note,) = repair_runs([(run, True)], apply=False)
    assert "would move it to" in note
    assert not (run / "damaged").exists()


def test_a_run_a_live_process_writes_is_left_alone(run):
    truncate(run / "metrics.json")
    with hold_writer(run, "dfil evaluate"):
        (note,) = repair_runs([(run, True)])
    assert "writes" in note and "left as it is" in note
    assert not (run / "damaged").exists()


@pytest.mark.parametrize("damage,problem", [
    (lambda run: shutil.rmtree(run / "adapter"), "missing"),  # trained before runs had one
    (lambda run: truncate(run / "adapter" / "adapter_model.safetensors"), "unreadable: "),
    (lambda run: (run / "adapter" / "adapter_config.json").write_text("{"), "unreadable: "),
])
def test_a_lora_runs_missing_or_damaged_adapter_is_exported_again_in_place(run, damage,
                                                                            problem):
    exported = (run / "adapter" / "adapter_model.safetensors").read_bytes()
    results = {n: (run / n).read_bytes() for n in ("model.safetensors", "train_summary.json",
                                                   "metrics.json")}
    damage(run)
    (dry,) = repair_runs([(run, True)], apply=False)
    assert dry.startswith(f"dfil: {run / 'adapter'}: {problem}")
    assert dry.endswith(f"; would export it again from {run / 'model.safetensors'}")
    (note,) = repair_runs([(run, True)])
    assert note == dry.replace("would export it again", "exported again")
    assert (run / "adapter" / "adapter_model.safetensors").read_bytes() == exported
    assert {n: (run / n).read_bytes() for n in results} == results  # nothing else redone
    assert not (run / "damaged").exists()
    assert repair_runs([(run, True)]) == []


def test_an_adapter_whose_checkpoint_does_not_read_is_named_and_left(run):
    shutil.rmtree(run / "adapter")
    truncate(run / "model.safetensors")
    (note,) = repair_runs([(run, True)])
    assert note.startswith(f"dfil: {run / 'adapter'}: missing; not exported: ")
    assert str(run / "model.safetensors") in note and "\n" not in note
    assert not (run / "adapter").exists() and (run / "train_summary.json").exists()


def test_a_frozen_or_failed_run_has_no_adapter_to_miss(run):
    shutil.rmtree(run / "adapter")
    summary = json.loads((run / "train_summary.json").read_text())
    (run / "train_summary.json").write_text(json.dumps({**summary, "frozen_backbone": True}))
    assert repair_runs([(run, True)]) == []
    assert repair_runs([(run, False)]) == []  # a method that trains nothing


def test_the_safetensors_layout_is_checked_without_torch(run):
    from dfil.preflight.damage import safetensors_problem

    path = run / "adapter" / "adapter_model.safetensors"
    assert safetensors_problem(path) is None
    path.write_bytes(path.read_bytes() + b"x")
    size = path.stat().st_size
    assert safetensors_problem(path) == f"unreadable: {size} bytes where its header says {size - 1}"
    path.write_bytes(b"\x01")
    assert safetensors_problem(path) == "unreadable: 1 bytes, shorter than its header"
    for header, why in ((b"[]", "its header is JSON list, not an object"),
                        (b'{"w": {"data_offsets": [0, "x"]}}',
                         "a tensor's data offsets are not whole numbers"),
                        (b'{"w": {"data_offsets": [0, null]}}',
                         "a tensor's data offsets are not whole numbers"),
                        (b'{"w": 1}', "'int' object is not subscriptable")):
        path.write_bytes(len(header).to_bytes(8, "little") + header)
        assert safetensors_problem(path) == f"unreadable: {why}", header
    path.write_bytes(len(b"{}").to_bytes(8, "little") + b"{}")  # no tensor: whole
    assert safetensors_problem(path) is None
