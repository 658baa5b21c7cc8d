"""A hostile user's sweep, in one place: each bad grid value, command-line value
and target exits 2 with one line naming the file and key (or the flag) and what to do."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from dfil.cli import main
from dfil.preflight.targets import target_notes

SMOKE = Path(__file__).resolve().parents[1] / "config" / "smoke.yaml"
BASE = yaml.safe_load(SMOKE.read_text())


def _set(path: str, value):
    def change(cfg):
        *parents, last = path.split(".")
        node = cfg
        for key in parents:
            node = node[key]
        if value is KeyError:
            del node[last]
        else:
            node[last] = value
    return change


GRID_CASES = [
    ("groups.all_methods.lambdas", [-0.5], "groups.all_methods.lambdas[0]: must be >= 0"),
    ("seed_sets.one", [42.0], "seed_sets.one[0]"),
    ("seed_sets.one", [-1], "seed_sets.one[0]"),
    ("groups.fewshot.budgets", [0], "groups.fewshot.budgets[0]"),
    ("embedded_data.frog.n_easy", 0, "embedded_data.frog.n_easy"),
    ("embedded_data.frog.n_easy", KeyError, "embedded_data.frog.n_easy"),
    ("resources.cpu", KeyError, "resources"),
]


@pytest.mark.parametrize("path,value,key", GRID_CASES)
def test_a_bad_grid_value_is_one_line_naming_file_and_key(tmp_path, capsys, path, value, key):
    cfg = copy.deepcopy(BASE)
    _set(path, value)(cfg)
    grid = tmp_path / "grid.yaml"
    grid.write_text(yaml.safe_dump(cfg))
    assert main(["grid", "list", "--config", str(grid)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1, out.err
    assert out.err.startswith(f"dfil grid: error: {grid}: config ") and key in out.err


@pytest.mark.parametrize("args,flag", [
    (["synth-frog", "--out", "x", "--n-easy", "0"], "--n-easy"),
    (["synth-frog", "--out", "x", "--n-hard", "-5"], "--n-hard"),
    (["train", "--cell"], "--cell"),
])
def test_a_bad_command_line_value_is_one_line_naming_the_flag(capsys, args, flag):
    with pytest.raises(SystemExit) as stop:
        main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"argument {flag}" in err and "--help" in err


def test_a_target_outside_the_grid_is_one_line():
    key = "frog/tiny-llama/dfil/lam0.7/nfull/qure/seed42"
    (line,) = target_notes(["snakemake", f"results/smoke/runs/{key}/metrics.json"], "smoke",
                           ["frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"], [],
                           [str(SMOKE)])
    assert f"cell {key} is not in the grid 'smoke'" in line and "\n" not in line
