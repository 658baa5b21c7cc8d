"""A run killed under the previous code resumes under this one to the numbers of an
uninterrupted run: ``resume.pt`` (format dfil-resume/1) and the best checkpoint, feature
statistics included, are read as that code wrote them.

``fixtures/resume-v1/run`` is what main's code (commit 2433ae1) left after SIGTERM in the
15th training step (epoch 2, after its 5th step) of the frozen-backbone cell
``fixtures/resume-v1/cell.yaml``; made in a directory holding that cell.yaml with::

    PYTHONPATH=<main>/src:tests python -c 'from pathlib import Path; from cells import \\
      interrupted; from dfil.data.synthetic import write_frog_like; \\
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
def test_a_run_killed_under_the_previous_code_resumes_to_the_same_numbers(
        tmp_path, monkeypatch, capsys):
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
    assert main(["train", "--cell", "cell.yaml", "--out", "run"]) == 0
    assert "resuming attempt 1 at epoch 2, step 5" in capsys.readouterr().out
    assert main(["train", "--cell", "cell.yaml", "--out", "ref"]) == 0
    assert Path("run/train_log.jsonl").read_text() == Path("ref/train_log.jsonl").read_text()
    assert Path("run/model.safetensors").read_bytes() == Path("ref/model.safetensors").read_bytes()
    for run in ("run", "ref"):
        assert main(["evaluate", "--run", run]) == 0
    resumed, ref = (json.loads(Path(run, "metrics.json").read_text()) for run in ("run", "ref"))
    assert resumed["train"]["attempts"][0]["resumes"] == [{"epoch": 2, "step": 5}]
    assert stable(resumed) == stable(ref)
