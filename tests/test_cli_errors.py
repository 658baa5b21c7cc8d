"""What ``dfil`` does with an error: an input error (dfil.util.errors.InputError, a full disk
among them) is one line and exit 2; anything else is a bug and keeps its traceback."""

import errno
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dfil.cli import main

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "config" / "smoke.yaml"


def dfil(*args: str, code: str = "") -> subprocess.CompletedProcess:
    """``dfil *args`` in a fresh interpreter, after running ``code`` (to inject a bug)."""
    script = f"{code}\nimport sys\nfrom dfil.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_bad_grid_value_is_one_line_and_exit_2(tmp_path):
    cfg = yaml.safe_load(SMOKE.read_text())
    cfg["groups"]["all_methods"]["lambdas"] = [-0.5]
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(cfg))
    out = dfil("grid", "list", "--config", str(grid))
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        f"dfil grid: error: {grid}: config groups.all_methods.lambdas[0]: must be >= 0, "
        "got -0.5"]


@pytest.mark.parametrize("error", ["KeyError('boom')", "ValueError('boom')",
                                   "OSError(errno.EBADF, 'boom')"])
def test_a_programming_error_keeps_its_traceback_and_exits_1(error):
    bug = (f"import errno, dfil.config.grid\ndef _bug(*args): raise {error}\n"
           "dfil.config.grid.group_points = _bug")
    out = dfil("grid", "list", "--config", str(SMOKE), code=bug)
    assert out.returncode == 1
    assert "Traceback (most recent call last)" in out.stderr and "_bug" in out.stderr
    assert "boom" in out.stderr.splitlines()[-1] and "dfil grid: error" not in out.stderr


@pytest.mark.parametrize("text,message", [
    ("5", "expected a JSON object (the grid's mapping), got int '5'"),
    ("{x", "not JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
           "(char 1))")])
def test_a_grid_given_as_json_must_be_a_json_object(tmp_path, capsys, text, message):
    assert main(["grid", "resolve", "--json", text, "--out", str(tmp_path / "g.yaml")]) == 2
    assert capsys.readouterr().err == f"dfil grid: error: --json: {message}\n"
    assert not (tmp_path / "g.yaml").exists()


def test_a_missing_flag_and_a_missing_input_are_input_errors(tmp_path, capsys):
    assert main(["grid", "cell", "--config", str(SMOKE)]) == 2
    assert capsys.readouterr().err == ("dfil grid: error: dfil grid cell needs --key and --out "
                                       "(or --json)\n")
    assert main(["evaluate", "--run", str(tmp_path)]) == 2
    assert "cell.yaml: cannot read" in capsys.readouterr().err
    assert main(["aggregate", "--runs", str(tmp_path / "none"), "--out",
                 str(tmp_path / "a.parquet")]) == 2
    assert capsys.readouterr().err.endswith("none: no such runs directory\n")


@pytest.mark.parametrize("flag,value,message", [
    ("--n-easy", "0", "must be >= 1, got 0"), ("--n-hard", "-5", "must be >= 1, got -5"),
    ("--n-easy", "4.5", "expected an integer, got '4.5'")])
def test_synth_frog_refuses_counts_below_one(tmp_path, capsys, flag, value, message):
    with pytest.raises(SystemExit) as stop:
        main(["synth-frog", "--out", str(tmp_path), flag, value])
    assert stop.value.code == 2
    assert f"argument {flag}: {message}" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("command", ["synth-frog", "probes"])
def test_a_negative_seed_is_refused_as_the_flag(tmp_path, capsys, command):
    with pytest.raises(SystemExit) as stop:
        main([command, "--out", str(tmp_path), "--seed", "-1"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"dfil {command}: error: argument --seed: must be >= 0, got -1 (see dfil {command} "
        "--help)"]
    assert not any(tmp_path.iterdir())


def test_a_full_disk_names_the_path_and_leaves_no_half_written_file(tmp_path, capsys,
                                                                      monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("dfil.util.atomic.os.fsync", full)
    out = tmp_path / "cells" / "cell.yaml"
    key = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
    assert main(["grid", "cell", "--config", str(SMOKE), "--key", key, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dfil grid: error: {out}: no space left on its filesystem (")
    assert "free space there" in err and err.count("\n") == 1
    assert list(out.parent.iterdir()) == []


def test_a_full_disk_outside_the_atomic_writers_is_an_input_error_too(capsys, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/scratch/x.parquet")

    monkeypatch.setattr("dfil.config.grid.load_grid_files", full)
    assert main(["grid", "list", "--config", str(SMOKE)]) == 2
    assert capsys.readouterr().err.startswith(
        "dfil grid: error: /scratch/x.parquet: no space left on its filesystem")


def test_or_exit_turns_an_input_error_into_one_line(capsys):
    from dfil.util.errors import ConfigError, or_exit

    def bad(path):
        raise ConfigError(f"{path}: config seeds[0]:\n  must be >= 0")

    assert or_exit(len, "abc") == 3
    with pytest.raises(SystemExit) as stop:
        or_exit(bad, "grid.yaml")
    assert stop.value.code == 2  # as dfil's own input errors
    assert capsys.readouterr().err == "dfil: error: grid.yaml: config seeds[0]: must be >= 0\n"
    with pytest.raises(KeyError):  # a bug keeps its traceback
        or_exit({}.__getitem__, "x")
