"""A run killed under the previous code: its best checkpoint, feature statistics
included, is read as that code wrote it; its resume state (format dfil-resume/1) records
no input digests, so the run is moved aside and trained afresh (a run is keyed by
everything it trained on, :mod:`dfil.contracts.identity`).

``fixtures/resume-v1/run`` is what commit 2433ae1's code left after SIGTERM in the 15th
training step (epoch 2, after its 5th step) of the frozen-backbone cell
``fixtures/resume-v1/cell.yaml``; made in a directory holding that cell.yaml with::

    PYTHONPATH=<2433ae1>/src:<2433ae1>/tests python -c 'from pathlib import Path; \\
      from cells import interrupted; from dfil.data.synthetic import write_frog_like; \\
      write_frog_like(Path("frog"), seed=0, n_easy=96, n_hard=40); \\
      interrupted(Path("cell.yaml"), Path("run"), "SIGTERM", 15)'
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from cells import stable
from dfil.cli import main
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import load_model

FIXTURE = Path(__file__).parent / "fixtures" / "resume-v1"


@pytest.mark.slow
def test_a_run_killed_under_code_that_recorded_no_inputs_is_trained_afresh(
        tmp_path, monkeypatch, capsys):
    """Its checkpoint still loads (the feature statistics with it), but its resume state
    names no input digests: nothing shows what it was trained on, so it is moved aside
    (kept) and the cell trains afresh, to the numbers of an uninterrupted run here."""
    monkeypatch.chdir(tmp_path)  # the cell names its data relatively, as when it was made
    monkeypatch.setenv("DFIL_CACHE", str(tmp_path / "cache"))
    write_frog_like(Path("frog"), seed=0, n_easy=96, n_hard=40)
    shutil.copy(FIXTURE / "cell.yaml", "cell.yaml")
    shutil.copytree(FIXTURE / "run", "run")
    # Its epoch-1 checkpoint loads, the feature statistics with it.
    model, _ = load_model(Path("run/model.safetensors"))
    saved = load_file("run/model.safetensors")
    for name in ("mean", "std"):
        assert torch.equal(getattr(model.heads.norm, name), saved[f"heads.norm.{name}"])
    assert model.heads.norm.fitted

    assert main(["train", "--cell", "cell.yaml", "--out", "ref"]) == 0
    assert main(["evaluate", "--run", "ref"]) == 0
    capsys.readouterr()
    assert main(["train", "--cell", "cell.yaml", "--out", "run"]) == 0
    out = capsys.readouterr().out
    why = "its record names no input digests (trained before they were recorded)"
    assert why in out and "resuming" not in out
    summary = json.loads(Path("run/train_summary.json").read_text())
    assert summary["retrained"]["because"] == [why]
    kept = Path("run") / summary["retrained"]["superseded"]
    assert (kept / "resume.pt").read_bytes() == (FIXTURE / "run" / "resume.pt").read_bytes()
    assert main(["evaluate", "--run", "run"]) == 0
    afresh, ref = (load_file(f"{run}/model.safetensors") for run in ("run", "ref"))
    assert afresh.keys() == ref.keys()
    assert all(torch.equal(afresh[name], ref[name]) for name in ref)
    metrics = json.loads(Path("run/metrics.json").read_text())
    assert metrics["train"].pop("retrained") == summary["retrained"]  # all the difference
    assert stable(metrics) == stable(json.loads(Path("ref/metrics.json").read_text()))
