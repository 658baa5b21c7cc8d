"""A disk that fills up mid-write, on a real (small tmpfs) filesystem: the command exits 2
with one line naming the path and what to free, leaves no half-written file (the last good
one stays), and the rerun after freeing space gives what an uninterrupted run gives.
Mounting needs root; elsewhere these tests skip."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from cells import stable, tiny_cell
from dfil.cli import main
from dfil.contracts.metrics import write_metrics
from dfil.data.synthetic import write_frog_like
from records import metrics_record
from tmpfs import tmpfs


@pytest.fixture
def disk(tmp_path):
    """A 1 MiB tmpfs, unmounted after the test."""
    with tmpfs(tmp_path, "1m") as mount:
        yield mount


def fill(disk: Path, leave: int) -> Path:
    """A filler file leaving about ``leave`` bytes free on ``disk``."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler = disk / "filler"
    filler.write_bytes(b"\0" * max(free - leave, 0))
    return filler


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".*.tmp"))


def one_error_line(err: str, command: str, path: Path) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith(f"dfil {command}: error: {path}: no space left on its filesystem")
    assert "free space there" in err


def write_runs(runs: Path, n: int) -> None:
    for seed in range(n):
        run = runs / f"frog/tiny/dfil/lam0.5/nfull/qure/seed{seed}"
        run.mkdir(parents=True)
        record = metrics_record(seed=seed)
        record["test"]["mf"]["acc"] = seed / n
        write_metrics(run / "metrics.json", record)


def test_aggregate_on_a_full_disk_keeps_the_last_good_table(tmp_path, disk, capsys):
    runs, out = tmp_path / "runs", disk / "aggregate" / "metrics.parquet"
    write_runs(runs, 40)
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    good = out.read_bytes()
    capsys.readouterr()
    os.utime(out, (0, 0))
    filler = fill(disk, 4096)
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 2
    one_error_line(capsys.readouterr().err, "aggregate", out)
    assert out.read_bytes() == good and out.stat().st_mtime == 0  # untouched
    assert leftovers(disk) == []
    filler.unlink()
    assert main(["aggregate", "--runs", str(runs), "--out", str(out)]) == 0
    assert out.read_bytes() == good and len(pd.read_parquet(out)) > 0


@pytest.mark.slow
def test_evaluate_on_a_full_disk_names_the_path(tmp_path, disk, capsys):
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    run = disk / "run"
    assert main(["train", "--cell", str(tiny_cell(tmp_path, frog, "ev", epochs=1)), "--out",
                 str(run)]) == 0
    filler = fill(disk, 2048)
    capsys.readouterr()
    assert main(["evaluate", "--run", str(run)]) == 2
    assert f"error: {run}/" in capsys.readouterr().err
    filler.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("failing", ["model.safetensors", "resume.pt"])
def test_training_and_evaluation_on_a_full_disk_resume_to_the_same_numbers(tmp_path, disk,
                                                                          capsys, failing):
    """At an epoch's end training writes the checkpoint, then the resume state (trained
    weights, optimizer moments, RNG: larger than the checkpoint); the disk fills in one
    or the other."""
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "full", epochs=2)
    ref = tmp_path / "ref"
    assert main(["train", "--cell", str(cell), "--out", str(ref)]) == 0
    assert main(["evaluate", "--run", str(ref)]) == 0
    size = (ref / "model.safetensors").stat().st_size
    run = disk / "run"
    # Room for the log and either not the checkpoint or the checkpoint but no resume state.
    filler = fill(disk, size // 2 if failing == "model.safetensors" else size + size // 4)
    capsys.readouterr()
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run}/{failing}:" in err and "free space there" in err, err
    assert leftovers(disk) == []
    filler.unlink()
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    capsys.readouterr()
    filler = fill(disk, 2048)  # evaluation's predictions do not fit
    assert main(["evaluate", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run}/" in err and "free space there" in err, err
    assert not (run / "metrics.json").exists() and leftovers(disk) == []
    filler.unlink()
    assert main(["evaluate", "--run", str(run)]) == 0
    assert (run / "model.safetensors").read_bytes() == (ref / "model.safetensors").read_bytes()
    assert stable(json.loads((run / "metrics.json").read_text())) == stable(
        json.loads((ref / "metrics.json").read_text()))


@pytest.mark.slow
def test_render_on_a_full_disk_keeps_the_last_good_table(tmp_path, disk, capsys):
    """A table rendered onto a full disk: one line naming the .tex, the last good table
    untouched, no temporary left; after freeing space the same table as before."""
    from dfil.config.grid import load_grid_files
    from dfil.render import load_specs, table_keys

    root = Path(__file__).resolve().parents[1]
    config, tables = root / "config/smoke.yaml", root / "config/tables.yaml"
    runs = tmp_path / "runs"
    keys = table_keys(load_specs(tables), load_grid_files([config]), "lambda_sweep")
    for seed, key in enumerate(sorted(keys)):
        (runs / key).mkdir(parents=True)
        record = metrics_record(seed=seed)
        record["test"]["mf"]["acc"] = 0.25 + seed / 100
        write_metrics(runs / key / "metrics.json", record)
    out = disk / "T16-lambda-sweep.tex"
    args = ["render", "--config", str(config), "--tables", str(tables), "--runs", str(runs),
            "--table", "lambda_sweep", "--out", str(out)]
    assert main(args) == 0
    good = out.read_bytes()
    os.utime(out, (0, 0))
    capsys.readouterr()
    filler = fill(disk, 512)
    assert main(args) == 2
    one_error_line(capsys.readouterr().err, "render", out)
    assert out.read_bytes() == good and out.stat().st_mtime == 0 and leftovers(disk) == []
    filler.unlink()
    assert main(args) == 0
    assert out.read_bytes() == good
