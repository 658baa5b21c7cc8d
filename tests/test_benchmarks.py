"""The benchmark scripts run and print their figures (tiny sizes; timings are not tested)."""

import json
import runpy
import sys
from pathlib import Path

import pytest
import torch

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(name, args, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [name, *args])
    runpy.run_path(str(BENCH / name), run_name="__main__")
    return capsys.readouterr().out


@pytest.mark.slow
def test_train_throughput_prints_every_path(capsys, monkeypatch):
    out = run_script("train_throughput.py", ["--arch", "tiny-llama", "--device", "cpu",
                                             "--steps", "2", "--warmup", "2", "--rounds", "2",
                                             "--paths", "dfil,dfil-padded,dfil-grouped,pack,plain",
                                             "--pack", "2"],
                     capsys, monkeypatch)
    report = json.loads(out[: out.rindex("}") + 1])
    paths = {r["path"] for r in report["results"]}
    assert paths == {"dfil", "dfil-padded", "dfil-grouped", "pack", "plain"}
    for r in report["results"]:
        assert r["tokens_per_s"] > 0 and r["projected_cell_minutes"] > 0
        assert r["steps_per_s"] > 0 and len(r["steps_per_s_rounds"]) == 2
    layouts = {r["path"]: r["layout"] for r in report["results"]}
    assert layouts["dfil"] == "padded"  # SDPA on the CPU: no varlen kernel to pack for
    assert report["ratio_dfil_to_plain_steps_per_s"] > 0
    assert "MFU(6N)" in out and "dfil / plain steps/s" in out
    assert report["pack_seeds"] == 2 and report["ratio_pack_to_plain_tokens_per_s"] > 0
    assert "pack of 2 / plain tokens/s" in out


@pytest.mark.parametrize("method", ["dfil", "finetune", "coral", "corn"])
def test_frozen_pack_times_the_loop_the_stacked_heads_and_solo_steps(method, capsys,
                                                                      monkeypatch):
    out = run_script("frozen_pack.py", ["--method", method, "--seeds", "2", "--steps", "2",
                                        "--rounds", "2"], capsys, monkeypatch)
    report = json.loads(out[: out.rindex("}") + 1])
    assert set(report["ms_per_step"]) == {"loop", "stacked", "solo"}
    assert all(len(t) == 2 and min(t) > 0 for t in report["ms_per_step_rounds"].values())
    assert report["ratio_stacked_to_loop"] > 0 and "stacked / loop:" in out


def test_hot_paths_prints_ratio(capsys, monkeypatch):
    out = run_script("hot_paths.py", ["--n", "20000", "--repeats", "1"], capsys, monkeypatch)
    assert "x argsort" in out and "grid check" in out


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message without CUDA")
def test_qlora_memory_fails_clearly_without_cuda(capsys, monkeypatch):
    with pytest.raises(SystemExit, match="qlora_memory.py needs CUDA"):
        run_script("qlora_memory.py", [], capsys, monkeypatch)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_qlora_memory_extrapolates_a_small_arch(capsys, monkeypatch):
    out = run_script("qlora_memory.py", ["--arch", "qwen2.5-1.5b", "--layers", "1,2",
                                         "--steps", "2"], capsys, monkeypatch)
    report = json.loads(out[: out.rindex("}") + 1])
    assert report["per_layer_gib"]["peak_training_gib"] > 0
    assert "EXTRAPOLATED" in report["extrapolated_full_depth"]["label"]
    assert "float32" in report["measured"]["1"]["param_dtypes"]  # the norms


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_qlora_memory_measures_a_4bit_pack(capsys, monkeypatch):
    out = run_script("qlora_memory.py", ["--arch", "qwen2.5-1.5b", "--layers", "1,2",
                                         "--steps", "3", "--pack", "3"], capsys, monkeypatch)
    report = json.loads(out[: out.rindex("}") + 1])
    assert report["seeds"] == 3 and report["measured"]["1"]["seeds"] == 3
    assert report["measured"]["2"]["tokens_per_s_after_first_step"] > 0
    assert "3 seed(s)" in out


def test_embedded_stages_sums_imports_and_finds_the_critical_path(tmp_path):
    bench = runpy.run_path(str(BENCH / "embedded_stages.py"))
    logs = tmp_path / "logs"
    (logs / "train").mkdir(parents=True)
    # -X importtime's lines: only top-level imports (one space) count, cumulative column.
    (logs / "train" / "a.log").write_text(
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |       1500 | torch\n"
        "import time:        50 |        700 |   torch.nn\n"
        "import time:        10 |        500 | json\nepoch 1 done\n")
    (logs / "probes.log").write_text("import time:         5 |     250000 | numpy\n")
    assert bench["import_seconds"](logs) == {"train": 0.002, "data": 0.25}
    import pandas as pd

    jobs = pd.DataFrame({"job": ["probes/probes", "train_cell/k", "frozen_features/g/train",
                                 "evaluate_cell/k"], "s": [1.0, 5.0, 7.0, 2.0]})
    names = {"0": "probes/probes", "1": "frozen_features/g/train", "2": "train_cell/k",
             "3": "evaluate_cell/k", "4": "all_tables"}
    edges = [("0", "1"), ("0", "2"), ("1", "2"), ("2", "3"), ("3", "4")]
    total, chain = bench["critical_path"](jobs, names, edges)
    assert total == 15.0
    assert [name for name, _ in chain] == ["probes/probes", "frozen_features/g/train",
                                           "train_cell/k", "evaluate_cell/k", "all_tables"]
