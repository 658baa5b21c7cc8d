"""The acceptance run's records in the cost model: a measured cell record on a known GPU
is the dfil trainer's throughput at its batch, labelled as the acceptance run's; the
others are lines saying why they project nothing; `dfil grid cost` reads them from the
grid's results directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dfil.cli.cost import grid_cost
from dfil.config.grid import Grid
from dfil.config.yamlfile import load_yaml
from dfil.contracts.acceptance import record_path, write_acceptance
from dfil.cost.acceptance import acceptance_lines, acceptance_table
from dfil.cost.archs import arch
from dfil.cost.project import mfu
from dfil.cost.rates import MEASURED, gpu_of

ROOT = Path(__file__).resolve().parents[2]
H100 = "NVIDIA H100 80GB HBM3"
DATE = "2026-11-26T10:00:00+00:00"


def record(**over) -> dict:
    """A measured cell record of Qwen2.5-7B's shapes, batch 8, at half the recorded
    batch-8 speed (2,619.5 tokens/s at 120 tokens a prompt)."""
    base = {"kind": "cell", "backbone": "qwen2.5-7b", "cell": "c", "status": "measured",
            "reason": None, "device": H100, "gpu": "h100", "trainer_commit": "a" * 40,
            "package_version": "0.1.0", "date": DATE, "steps": 20, "batch": 8,
            "quantized": False, "layout": "packed", "prompt_tokens": 120.0,
            "seconds": 10.0, "tokens_per_s": 2619.5, "steps_per_s": 2.0,
            "peak_gpu_gib": 19.25, "peak_rss_gib": 3.0, "arch": arch("qwen2.5-7b")}
    return {**base, **over}


def test_gpu_of_names_the_peak_table_key():
    assert gpu_of(H100) == "h100"
    assert gpu_of("NVIDIA H100 PCIe") == "h100-pcie"
    assert gpu_of("NVIDIA H200") == "h200"
    assert gpu_of("NVIDIA A100-SXM4-80GB") == "a100"
    assert gpu_of("NVIDIA L40S") is None


def test_a_measured_cell_record_is_the_dfil_trainers_throughput():
    (key, th), = acceptance_table([record()]).items()
    assert key == ("dfil", 8)
    assert th.label() == (
        "2,620 tokens/s, the project's training step (cell qwen2.5-7b, batch 8); measured by "
        f"the acceptance run on {H100}, {DATE}; 20 timed steps, packed batches, 2,620 "
        "tokens/s, 2.00 steps/s, peak 19.2 GiB GPU memory, trainer commit aaaaaaaaaaaa")
    # The same shapes and GPU at half the recorded speed are half its MFU.
    assert mfu(th) == pytest.approx(mfu(MEASURED[("dfil", 8)]) / 2, rel=1e-12)


def test_records_that_project_nothing_say_why():
    cpu = record(device="cpu (x86_64, 2 threads)", gpu=None, peak_gpu_gib=None,
                 peak_rss_gib=0.5, tokens_per_s=800.0, steps_per_s=0.75)
    qlora = record(kind="qlora", backbone="qwen2.5-72b", quantized=True)
    skipped = {k: v for k, v in record(kind="qlora", status="skipped",
                                       reason="no CUDA").items()
               if k not in ("layout", "prompt_tokens", "seconds", "tokens_per_s",
                            "steps_per_s", "peak_gpu_gib", "peak_rss_gib", "arch")}
    assert acceptance_table([cpu, qlora, skipped]) == {}
    lines = acceptance_lines([record(), cpu, qlora, skipped])
    assert lines[0].endswith(": the dfil trainer's projection at batch 8")
    assert lines[1] == (
        "acceptance cell qwen2.5-7b: 800 tokens/s, 0.75 steps/s, peak 0.5 GiB RSS; measured "
        f"by the acceptance run on cpu (x86_64, 2 threads), {DATE} (trainer commit "
        "aaaaaaaaaaaa): not projected: GPU-hours need a GPU the cost model knows (a100, "
        "h100, h100-pcie, h200)")
    assert lines[2].endswith(": a source, not projected (4-bit)")
    assert lines[3] == f"acceptance qlora qwen2.5-7b: skipped: no CUDA (on {H100}, {DATE})"


def test_grid_cost_projects_the_dfil_trainer_from_the_acceptance_records(tmp_path):
    """Records at half the recorded speeds at batch 8 and 32, on their shapes and GPU: the
    dfil trainer's GPU-hours one seed per job, less each job's weights' load, double."""
    grid = Grid(load_yaml(ROOT / "config/smoke.yaml"), results_root=str(tmp_path))

    def solo_hours(text):
        line = next(x for x in text.splitlines() if x.startswith("trainer dfil: "))
        return float(line.split()[8])

    before = grid_cost(grid, "h100", "dfil", pack="off")
    write_acceptance(record_path(grid.results, "cell", "a"), record())
    write_acceptance(record_path(grid.results, "cell", "b"),
                     record(backbone="b", batch=32, tokens_per_s=10365 / 2))
    text = grid_cost(grid, "h100", "dfil", pack="off")
    assert solo_hours(text) == pytest.approx(2 * solo_hours(before), rel=0.05)
    assert "  dfil: 5,182 tokens/s, the project's training step (cell b, batch 32); " \
           "measured by the acceptance run" in text
    assert "  plain: 5,164 tokens/s" in text
    assert json.loads(record_path(grid.results, "cell", "a").read_text())["batch"] == 8
