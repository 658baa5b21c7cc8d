"""A job imports only what it uses: ``dfil --help`` no library, a frozen-feature cell's
training and evaluation on cached features neither transformers nor peft nor
bitsandbytes, a LoRA cell peft without bitsandbytes (only a 4-bit backbone needs it).
Each job runs in a child process, whose ``sys.modules`` is read at its end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cells import tiny_cell
from dfil.contracts.metrics import write_metrics
from dfil.data.synthetic import write_frog_like
from hubrepos import tiny_model_files
from records import metrics_record

#: Runs ``dfil`` on each argument list of argv[1] (JSON), then prints sys.modules (JSON).
JOBS = """
import json, sys
from dfil.cli import main
for argv in json.loads(sys.argv[1]):
    assert main(argv) == 0, argv
print(json.dumps(sorted(sys.modules)))
"""
HEAVY = ("torch", "transformers", "peft", "bitsandbytes")
ROOT = Path(__file__).resolve().parents[1]


def loaded(*jobs: list, env: dict | None = None, code: str = JOBS) -> set[str]:
    """The top-level packages and the torch submodules a child process running ``jobs``
    had imported at its end."""
    out = subprocess.run([sys.executable, "-c", code, json.dumps([list(map(str, j))
                                                                  for j in jobs])],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "DFIL_PROGRESS": "0", **(env or {})})
    assert out.returncode == 0, out.stderr[-3000:]
    names = json.loads(out.stdout.splitlines()[-1])
    return {n for n in names if "." not in n or n.startswith("torch._")}


def test_help_imports_no_library():
    mods = loaded(["--help"], code=JOBS.replace("assert main(argv) == 0, argv",
                                                "try:\n        main(argv)\n"
                                                "    except SystemExit:\n        pass"))
    assert not mods & {*HEAVY, "numpy", "pandas", "yaml"}


@pytest.mark.slow
def test_lora_cell_imports_peft_without_bitsandbytes():
    code = ("import json, sys\nfrom dfil.model import build_model\nfrom tinymodel import "
            "tiny_config\nbuild_model(tiny_config('dfil'), seed=0)\n"
            "print(json.dumps(sorted(sys.modules)))")
    tests = str(Path(__file__).parent)
    mods = loaded(env={"PYTHONPATH": os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])},
                  code=code)
    assert "peft" in mods and "bitsandbytes" not in mods


@pytest.mark.slow
def test_frozen_feature_jobs_on_cached_features_import_no_model_library(tmp_path):
    """The embedded default's way: a backbone in a local directory, frozen, its features
    cached by the first cell's jobs; a second cell's jobs then read only the cache."""
    write_frog_like(tmp_path / "frog", seed=0, n_easy=64, n_hard=24)
    tiny_model_files(tmp_path / "backbone")
    env = {"DFIL_CACHE": str(tmp_path / "cache")}
    cells = {}
    for seed in (1, 2):
        path = tiny_cell(tmp_path, tmp_path / "frog", f"seed{seed}", epochs=1, seed=seed)
        data = yaml.safe_load(path.read_text())
        data["model"].update(adapter="none", heads={"feature_norm": "standardize"},
                             backbone={"name": "tiny", "model_id": str(tmp_path / "backbone")})
        path.write_text(yaml.safe_dump(data))
        cells[seed] = path
    zero = yaml.safe_load(cells[1].read_text())
    zero["model"]["method"] = "zero_shot"
    (tmp_path / "zero.yaml").write_text(yaml.safe_dump(zero))
    runs = {name: tmp_path / name for name in ("one", "two", "zero")}

    # A miss computes the features (the backbone and tokenizer loaded through
    # transformers); option scoring loads the causal LM; neither needs peft.
    first = loaded(["train", "--cell", cells[1], "--out", runs["one"]],
                   ["evaluate", "--run", runs["one"]],
                   ["train", "--cell", tmp_path / "zero.yaml", "--out", runs["zero"]],
                   ["evaluate", "--run", runs["zero"]], env=env)
    assert "transformers" in first and not first & {"peft", "bitsandbytes"}
    train = loaded(["train", "--cell", cells[2], "--out", runs["two"]], env=env)
    assert "torch" in train and not train & {"transformers", "peft", "bitsandbytes"}
    evaluate = loaded(["evaluate", "--run", runs["two"]], env=env)
    assert "torch" in evaluate and not evaluate & {"transformers", "peft", "bitsandbytes",
                                                   "torch._dynamo", "torch._inductor"}
    assert json.loads((runs["two"] / "metrics.json").read_text())["note"].startswith("frozen")


@pytest.mark.slow
def test_feature_jobs_import_no_adapter_library_and_cells_after_them_no_model_library(
        tmp_path):
    """The DAG's way: ``dfil features`` per item set first (the backbone loaded through
    transformers, neither peft nor bitsandbytes), then a frozen cell's train and evaluate
    with DFIL_FEATURES_CACHED=1 (a miss would fail) import torch only."""
    write_frog_like(tmp_path / "frog", seed=0, n_easy=64, n_hard=24)
    tiny_model_files(tmp_path / "backbone")
    env = {"DFIL_CACHE": str(tmp_path / "cache")}
    path = tiny_cell(tmp_path, tmp_path / "frog", "frozen", epochs=1, seed=1)
    cell = yaml.safe_load(path.read_text())
    cell["model"].update(adapter="none", heads={"feature_norm": "standardize"},
                         backbone={"name": "tiny", "model_id": str(tmp_path / "backbone")})
    path.write_text(yaml.safe_dump(cell))
    sets = ("train", "val", "test")
    features = loaded(*(["features", "--json", json.dumps(cell), "--items", name,
                         "--stamp", tmp_path / f"{name}.json"] for name in sets), env=env)
    assert {"torch", "transformers"} <= features
    assert not features & {"peft", "bitsandbytes"}
    assert all(json.loads((tmp_path / f"{n}.json").read_text())["computed"] for n in sets)
    cached = dict(env, DFIL_FEATURES_CACHED="1")
    run = tmp_path / "run"
    train = loaded(["train", "--cell", path, "--out", run], env=cached)
    evaluate = loaded(["evaluate", "--run", run], env=cached)
    for mods in (train, evaluate):
        assert "torch" in mods and not mods & {"transformers", "peft", "bitsandbytes"}


@pytest.mark.slow
def test_aggregate_and_table_render_jobs_import_no_torch_and_no_matplotlib(tmp_path):
    """Jobs over metrics files: the aggregate and a table's render (no figure drawn)."""
    from dfil.config.grid import load_grid_files
    from dfil.render import load_specs, table_keys

    smoke, tables = ROOT / "config" / "smoke.yaml", ROOT / "config" / "tables.yaml"
    runs = tmp_path / "runs"
    keys = sorted(table_keys(load_specs(tables), load_grid_files([smoke]), "lambda_sweep"))
    for seed, key in enumerate(keys):
        (runs / key).mkdir(parents=True)
        write_metrics(runs / key / "metrics.json", metrics_record(seed=seed))
    mods = loaded(["aggregate", "--runs", runs, "--out", tmp_path / "metrics.parquet"],
                  ["render", "--config", smoke, "--tables", tables, "--runs", runs,
                   "--table", "lambda_sweep", "--out", tmp_path / "T16.tex"])
    assert (tmp_path / "T16.tex").exists() and "pandas" in mods
    assert not mods & {*HEAVY, "matplotlib"}
