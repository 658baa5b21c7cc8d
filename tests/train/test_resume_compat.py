"""A run killed under the previous code resumes under this one to the numbers of an
uninterrupted run: ``resume.pt`` (format dfil-resume/1) and the best checkpoint, feature
statistics included, are read as that code wrote them.

``fixtures/resume-v1/run`` is what commit 2433ae1's code left after SIGTERM in the 15th
training step (epoch 2, after its 5th step) of the frozen-backbone cell
``fixtures/resume-v1/cell.yaml``; made in a directory holding that cell.yaml with::

    PYTHONPATH=<2433ae1>/src:<2433ae1>/tests python -c 'from pathlib import Path; \\
      from cells import interrupted; from dfil.data.synthetic import write_frog_like; \\
      write_frog_like(Path("frog"), seed=0, n_easy=96, n_hard=40); \\
      interrupted(Path("cell.yaml"), Path("run"), "SIGTERM", 15)'

The fixture's bits come from the CPU that made it, and frozen features differ in their
last bits between CPUs, so the resumed run is not compared bit for bit: it may end no
further from an uninterrupted run made here than an uninterrupted run on features moved
by two ulps ends from it. Both distances are measured here, in this test.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from cells import stable
from dfil.cli import main
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import load_model

FIXTURE = Path(__file__).parent / "fixtures" / "resume-v1"


def nudged(cache: Path, out: Path, ulps: int = 2, seed: int = 0) -> Path:
    """A copy of the feature cache ``cache`` with every feature and token state moved by
    ``ulps`` units in the last place, up or down at random: another CPU's last bits,
    everywhere at once (a real one differs in some of them)."""
    shutil.copytree(cache, out)
    gen = torch.Generator().manual_seed(seed)
    for path in sorted((out / "features").glob("*.safetensors")):
        tensors = load_file(str(path))
        for name in ("features", "states"):
            if name in tensors:
                x = tensors[name]
                up = torch.rand(x.shape, generator=gen) < 0.5
                toward = torch.where(up, torch.full_like(x, math.inf),
                                     torch.full_like(x, -math.inf))
                for _ in range(ulps):
                    x = torch.nextafter(x, toward)
                tensors[name] = x
        save_file(tensors, str(path))
    return out


def numbers(run: Path) -> list[float]:
    """Everything a run ends with, as one flat list: each epoch's logged figures, the
    trained weights and the metrics (what differs between processes aside)."""
    out: list[float] = []

    def walk(value) -> None:
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return
        if isinstance(value, (int, float)):
            out.append(float(value))
        elif isinstance(value, dict):
            for key in sorted(value):
                walk(value[key])
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk([json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()])
    weights = load_file(str(run / "model.safetensors"))
    walk([weights[name].double().flatten().tolist() for name in sorted(weights)])
    walk(stable(json.loads((run / "metrics.json").read_text())))
    return out


def distance(a: Path, b: Path) -> float:
    """The root mean square of the differences between two runs' :func:`numbers` (a mean,
    not a maximum: the largest of hundreds of last-bit differences is itself noise)."""
    x, y = numbers(a), numbers(b)
    assert len(x) == len(y), f"{a} and {b} do not hold the same numbers"
    return math.sqrt(sum((u - v) ** 2 for u, v in zip(x, y, strict=True)) / len(x))


@pytest.mark.slow
def test_a_run_killed_under_the_previous_code_resumes_to_the_same_numbers(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the cell names its data relatively, as when it was made
    cache = tmp_path / "cache"
    monkeypatch.setenv("DFIL_CACHE", str(cache))
    write_frog_like(Path("frog"), seed=0, n_easy=96, n_hard=40)
    shutil.copy(FIXTURE / "cell.yaml", "cell.yaml")
    shutil.copytree(FIXTURE / "run", "run")
    # Its epoch-1 checkpoint loads, the feature statistics with it.
    model, _ = load_model(Path("run/model.safetensors"))
    saved = load_file("run/model.safetensors")
    for name in ("mean", "std"):
        assert torch.equal(getattr(model.heads.norm, name), saved[f"heads.norm.{name}"])
    assert model.heads.norm.fitted

    # The uninterrupted run here, which also fills the feature cache (test split included).
    assert main(["train", "--cell", "cell.yaml", "--out", "ref"]) == 0
    assert main(["evaluate", "--run", "ref"]) == 0
    # The same run on features two ulps away: the spread that last bits alone give.
    monkeypatch.setenv("DFIL_CACHE", str(nudged(cache, tmp_path / "cache-nudged")))
    assert main(["train", "--cell", "cell.yaml", "--out", "nudged"]) == 0
    assert main(["evaluate", "--run", "nudged"]) == 0
    monkeypatch.setenv("DFIL_CACHE", str(cache))
    capsys.readouterr()

    assert main(["train", "--cell", "cell.yaml", "--out", "run"]) == 0
    assert "resuming attempt 1 at epoch 2, step 5" in capsys.readouterr().out
    assert main(["evaluate", "--run", "run"]) == 0
    resumed = json.loads(Path("run/metrics.json").read_text())
    assert resumed["train"]["attempts"][0]["resumes"] == [{"epoch": 2, "step": 5}]

    tolerance = distance(Path("nudged"), Path("ref"))
    # The check has power while last-bit noise stays last-bit noise: a run that such a
    # nudge moves by more is chaotic, and any resume would pass.
    assert 0 < tolerance < 1e-5, f"two ulps moved an uninterrupted run by {tolerance}"
    gap = distance(Path("run"), Path("ref"))
    assert gap <= tolerance, (f"the resumed run ends {gap:.3g} from the uninterrupted one; "
                              f"last-bit noise in the features moves a run {tolerance:.3g}")
