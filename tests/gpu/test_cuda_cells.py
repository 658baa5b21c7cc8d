"""On CUDA (``pytest -m gpu``; skipped without a GPU): a real tiny cell trains and
evaluates with no host synchronisation after its first step, and a cell killed mid-epoch
resumes to the metrics of an uninterrupted run (CUDA RNG restored, deterministic
kernels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from cells import interrupted, run_cli, stable, tiny_cell
from dfil.data.synthetic import write_frog_like

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")]


@pytest.fixture(scope="module")
def frog_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("frog")
    write_frog_like(out, seed=0, n_easy=96, n_hard=40)
    return out


def train_and_evaluate(cell: Path, run: Path, env: dict | None = None) -> dict:
    trained = run_cli("train", "--cell", cell, "--out", run, env=env)
    assert trained.returncode == 0, trained.stderr[-4000:]
    evaluated = run_cli("evaluate", "--run", run, env=env)
    assert evaluated.returncode == 0, evaluated.stderr[-4000:]
    return json.loads((run / "metrics.json").read_text())


def test_cell_on_cuda_has_no_host_sync_after_the_first_step(tmp_path, frog_dir):
    """DFIL_SYNC_DEBUG=error: torch.cuda.set_sync_debug_mode("error") from each epoch's
    second step to its end, and over every prediction pass after its first batch; any
    host synchronisation there fails the command."""
    cell = tiny_cell(tmp_path, frog_dir, epochs=2)
    metrics = train_and_evaluate(cell, tmp_path / "run", env={"DFIL_SYNC_DEBUG": "error"})
    # provenance names the device ("NVIDIA H100 80GB HBM3"), and the GPU beside it
    assert metrics["provenance"]["gpu"] == torch.cuda.get_device_name()
    assert set(metrics["test"]) == {"main", "mf", "ensemble", "best"}


@pytest.mark.parametrize("sig,at_step", [("SIGTERM", 18), ("SIGKILL", 17)])
def test_killed_cuda_cell_resumes_to_identical_metrics(tmp_path, frog_dir, sig, at_step):
    # 77 train examples / batch 8 = 10 steps per epoch: step 18 is mid epoch 2. LoRA
    # dropout draws from the CUDA generator, so only a restored CUDA state ends the same.
    cell = tiny_cell(tmp_path, frog_dir)
    reference = train_and_evaluate(cell, tmp_path / "reference")
    run = tmp_path / "run"
    first = interrupted(cell, run, sig, at_step)
    assert first.returncode == (143 if sig == "SIGTERM" else -9), first.stderr[-4000:]
    assert (run / "resume.pt").exists()
    state = torch.load(run / "resume.pt", map_location="cpu", weights_only=True)
    assert "cuda_rng" in state
    resumed = train_and_evaluate(cell, run)
    assert stable(resumed) == stable(reference)
    assert (run / "train_log.jsonl").read_text() == (
        tmp_path / "reference" / "train_log.jsonl").read_text()


def test_packed_cell_with_flash_attention(tmp_path, frog_dir):
    pytest.importorskip("flash_attn", reason="packed batches need flash-attn installed")
    cell = tiny_cell(tmp_path, frog_dir, epochs=1, batching="packed")
    trained = run_cli("train", "--cell", cell, "--out", tmp_path / "run",
                      env={"DFIL_SYNC_DEBUG": "error"})
    assert trained.returncode == 0, trained.stderr[-4000:]
    assert "attention flash_attention_2" in trained.stdout and "batches: packed" in trained.stdout
