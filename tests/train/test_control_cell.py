"""A positive control trains through `dfil train` on the tiny model: the same heads as its
reference cell over one more input dimension, the true proportion, which the p head must
then read (the monotonicity control's declared effect: p_mae falls by >= 0.05)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import yaml
from safetensors.torch import load_file

from cells import run_cli, tiny_cell
from dfil.claims import control_result
from dfil.data.synthetic import write_frog_like
from hubrepos import tiny_model_files


@pytest.mark.slow
def test_a_control_cell_reads_the_proportion_and_shows_its_effect(tmp_path):
    write_frog_like(tmp_path / "frog", seed=0, n_easy=96, n_hard=40)
    tiny_model_files(tmp_path / "backbone")
    env = {"DFIL_CACHE": str(tmp_path / "cache")}
    runs, cached = {}, {}
    for name, control in (("reference", "none"), ("control", "proportion")):
        path = tiny_cell(tmp_path, tmp_path / "frog", name, epochs=10, seed=1)
        data = yaml.safe_load(path.read_text())
        data["model"].update(adapter="none",
                             heads={"feature_norm": "standardize", "control_input": control},
                             backbone={"name": "tiny", "model_id": str(tmp_path / "backbone")})
        path.write_text(yaml.safe_dump(data))
        runs[name] = tmp_path / name
        for argv in (["train", "--cell", path, "--out", runs[name]],
                     ["evaluate", "--run", runs[name]]):
            done = run_cli(*argv, env=env)
            assert done.returncode == 0, done.stderr[-2000:]
        cached[name] = sorted((tmp_path / "cache" / "features").glob("*.safetensors"))
    widths = {name: load_file(str(run / "model.safetensors"))["heads.norm.mean"].numel()
              for name, run in runs.items()}
    assert widths["control"] == widths["reference"] + 1  # the one appended input
    # the control read the reference's cached features: it cost no backbone pass
    assert cached["control"] == cached["reference"] and cached["reference"]
    mae = {name: json.loads((run / "metrics.json").read_text())["p_mae"]
           for name, run in runs.items()}
    spec = SimpleNamespace(family="monotonicity", metric="p_mae", direction="less",
                           threshold=0.05)
    result = control_result("monotonicity", spec, [(mae["control"], mae["reference"])])
    assert result["outcome"] == "passed", (mae, result)
