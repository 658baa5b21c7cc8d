"""An output location the filesystem refuses to write (a read-only filesystem, or no
permission) is a user error like a full disk: the command exits 2 with one line naming
the path and the fix, the last good output stays, and no half-written file is left.

Root ignores file modes, so the real cases use a tmpfs remounted read-only (EROFS, which
refuses root too; mounting needs root, elsewhere they skip) and a permission refusal is
simulated by the write call raising ``PermissionError``."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from cells import tiny_cell
from dfil.cli import main
from dfil.contracts.metrics import write_metrics
from dfil.data.synthetic import write_frog_like
from records import metrics_record
from tmpfs import tmpfs

ROOT = Path(__file__).resolve().parents[1]
SMOKE, TABLES = ROOT / "config" / "smoke.yaml", ROOT / "config" / "tables.yaml"
READ_ONLY = "read-only filesystem; remount it read-write, or point the output " \
            "elsewhere, then rerun the same command"


@pytest.fixture
def disk(tmp_path):
    """A writable tmpfs and the function that remounts it read-only; unmounted after."""
    with tmpfs(tmp_path, "8m") as mount:
        def seal() -> None:
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)

        yield mount, seal


def one_line(err: str, command: str, path: Path) -> None:
    assert err.count("\n") == 1, err
    assert err == f"dfil {command}: error: {path}: {READ_ONLY}\n", err


def write_runs(runs: Path, keys: list[str]) -> None:
    for seed, key in enumerate(keys):
        (runs / key).mkdir(parents=True)
        record = metrics_record(seed=seed)
        record["test"]["mf"]["acc"] = 0.25 + seed / 100
        write_metrics(runs / key / "metrics.json", record)


def test_data_writers_on_a_read_only_filesystem_name_the_path(disk, capsys):
    mount, seal = disk
    seal()
    for command, out in [("synth-frog", mount / "frog"), ("probes", mount / "probes")]:
        capsys.readouterr()
        assert main([command, "--out", str(out), "--seed", "0"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dfil {command}: error: {out}") and READ_ONLY in err, err
        assert err.count("\n") == 1
    assert list(mount.iterdir()) == []


def test_aggregate_and_render_keep_the_last_good_output(tmp_path, disk, capsys):
    """Made once while writable; sealed, the same commands are one line each, and the
    outputs stay byte for byte."""
    from dfil.config.grid import load_grid_files
    from dfil.render import load_specs, table_keys

    mount, seal = disk
    runs = tmp_path / "runs"
    write_runs(runs, sorted(table_keys(load_specs(TABLES), load_grid_files([SMOKE]),
                                       "lambda_sweep")))
    table, tex = mount / "aggregate" / "metrics.parquet", mount / "T16-lambda-sweep.tex"
    commands = {
        "aggregate": (["aggregate", "--runs", str(runs), "--out", str(table)], table),
        "render": (["render", "--config", str(SMOKE), "--tables", str(TABLES), "--runs",
                    str(runs), "--table", "lambda_sweep", "--out", str(tex)], tex),
    }
    for args, _ in commands.values():
        assert main(args) == 0
    good = {p: p.read_bytes() for p in mount.rglob("*") if p.is_file()}
    seal()
    for command, (args, out) in commands.items():
        capsys.readouterr()
        assert main(args) == 2
        one_line(capsys.readouterr().err, command, out)
    assert {p: p.read_bytes() for p in mount.rglob("*") if p.is_file()} == good


def test_train_into_a_read_only_run_directory_names_it(tmp_path, disk, capsys):
    mount, seal = disk
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell, run = tiny_cell(tmp_path, frog, "ro", epochs=1), mount / "run"
    seal()
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dfil train: error: {run}") and READ_ONLY in err, err
    assert err.count("\n") == 1 and not run.exists()


@pytest.mark.slow
def test_evaluate_in_a_read_only_run_directory_names_the_file(tmp_path, disk, capsys):
    mount, seal = disk
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    run = mount / "run"
    assert main(["train", "--cell", str(tiny_cell(tmp_path, frog, "ev", epochs=1)), "--out",
                 str(run)]) == 0
    trained = sorted(p.name for p in run.iterdir())
    seal()
    capsys.readouterr()
    assert main(["evaluate", "--run", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dfil evaluate: error: {run}/") and READ_ONLY in err, err
    assert err.count("\n") == 1 and sorted(p.name for p in run.iterdir()) == trained


@pytest.mark.parametrize("code,words", [
    (errno.EACCES, "permission denied; give this user access to it and its directory, or "
                   "point the output elsewhere, then rerun the same command"),
    (errno.EROFS, READ_ONLY),
])
def test_a_refused_write_names_the_output_and_leaves_no_half_written_file(
        tmp_path, capsys, monkeypatch, code, words):
    """Any user (root included): the atomic writer's final rename is refused."""
    def refuse(src, dst):
        raise OSError(code, os.strerror(code), str(dst))

    monkeypatch.setattr("dfil.util.atomic.os.replace", refuse)
    out = tmp_path / "cells" / "cell.yaml"
    key = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
    assert main(["grid", "cell", "--config", str(SMOKE), "--key", key, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"dfil grid: error: {out}: {words}\n"
    assert list(out.parent.iterdir()) == []


def test_a_refused_write_outside_the_atomic_writers_is_an_input_error_too(capsys,
                                                                        monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", "/scratch/run/x.lock")

    monkeypatch.setattr("dfil.config.grid.load_grid_files", refuse)
    assert main(["grid", "list", "--config", str(SMOKE)]) == 2
    assert capsys.readouterr().err == (
        "dfil grid: error: /scratch/run/x.lock: permission denied; give this user access to "
        "it and its directory, or point the output elsewhere, then rerun the same command\n")


def test_a_damaged_run_file_in_read_only_results_is_one_line(disk, capsys):
    """Before the DAG is built, a damaged file is moved aside; where results/ cannot
    change, the Snakefile stops with one line naming it (never an OSError traceback)."""
    from dfil.preflight.damage import repair_runs
    from dfil.util.errors import or_exit

    mount, seal = disk
    run = mount / "runs" / "frog" / "seed1"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text('{"test": ')
    seal()
    with pytest.raises(SystemExit) as stop:
        or_exit(repair_runs, [(run, False)])
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"dfil: error: {run / 'damaged'}: {READ_ONLY}\n"
    assert sorted(p.name for p in run.iterdir()) == ["metrics.json"]
