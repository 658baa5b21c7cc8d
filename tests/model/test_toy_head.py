"""A new head kind in one file: a toy ordinal head registered here (its layer, loss and
decoding), a method using it, and a tiny cell trained and evaluated with it end to end
(tiny random Llama, synthetic FRoG-like data)."""

from __future__ import annotations

import json
import math

import pytest
import torch
from torch import nn

from cells import tiny_cell
from dfil.cli import main
from dfil.core.methods import METHODS, MethodSpec, register_method
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import read_checkpoint
from dfil.model.registry import HEADS, MainHead, main_head, register_head


class ScoreLayer(nn.Module):
    """One real score s per example, read as logits -(s - k)^2 of the classes k = 0..Q-1.
    ``[B, d] -> [B, Q]``."""

    def __init__(self, d: int, num_classes: int):
        super().__init__()
        self.score = nn.Linear(d, 1)
        self.register_buffer("ks", torch.arange(num_classes, dtype=torch.float32))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return -((self.score(h) - self.ks) ** 2)


class ToyScore(MainHead):
    """A toy ordinal head: the score regresses the label (loss mean (s - y)^2, which is
    minus the logit of the true class); probabilities softmax_k(-(s - k)^2); the label is
    their argmax, the class nearest s."""

    name = "toy_score"

    def build(self, d: int, num_classes: int, heads) -> nn.Module:
        return ScoreLayer(d, num_classes)

    def loss(self, logits, y, class_weights):
        return -logits.gather(1, y[:, None]).mean()

    def class_probs(self, logits):
        return torch.softmax(logits, dim=-1)


@pytest.fixture(scope="module")
def toy_method():
    """The toy head and a method ``toy`` using it, registered for this module only."""
    register_head(ToyScore())
    register_method(MethodSpec("toy", main="toy_score"))
    yield "toy"
    HEADS.pop("toy_score")
    METHODS.pop("toy")


def test_the_toy_head_regresses_and_decodes_by_its_own_rule(toy_method):
    head = main_head("toy_score")
    layer = head.build(2, 8, None)
    with torch.no_grad():
        layer.score.weight.copy_(torch.tensor([[1.0, 0.0]]))
        layer.score.bias.zero_()
    logits = layer(torch.tensor([[1.4, 5.0], [-3.0, 0.0], [9.2, 1.0]]))  # s = 1.4, -3, 9.2
    assert logits[0].tolist() == pytest.approx([-((1.4 - k) ** 2) for k in range(8)])
    assert head.loss(logits, torch.tensor([1, 0, 7]), None).item() == pytest.approx(
        (0.4**2 + 3.0**2 + 2.2**2) / 3, rel=1e-6)
    # softmax_k(-(1.4 - k)^2) over k = 0..7; its argmax is the class nearest s.
    w = [math.exp(-((1.4 - k) ** 2)) for k in range(8)]
    probs = head.class_probs(logits)
    assert probs[0].tolist() == pytest.approx([x / sum(w) for x in w], rel=1e-6)
    assert probs.argmax(-1).tolist() == [1, 0, 7] and head.rank_labels(logits) is None


def test_a_registered_name_is_refused_twice(toy_method):
    with pytest.raises(ValueError, match="'toy_score' is empty or already registered"):
        register_head(ToyScore())
    with pytest.raises(ValueError, match="'toy' is empty or already registered"):
        register_method(MethodSpec("toy", main="toy_score"))


@pytest.mark.slow
def test_a_tiny_cell_trains_and_evaluates_with_the_toy_head(tmp_path, toy_method):
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "toy", epochs=1)
    config = cell.read_text().replace("method: dfil", f"method: {toy_method}")
    cell.write_text(config)
    run = tmp_path / "run"
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    config, state, _ = read_checkpoint(run / "model.safetensors")
    assert config.method == "toy"
    heads = {k: tuple(v.shape) for k, v in state.items() if k.startswith("heads.")}
    assert heads == {"heads.main.score.weight": (1, 32), "heads.main.score.bias": (1,),
                     "heads.main.ks": (8,)}  # the toy head alone: no MF path
    m = json.loads((run / "metrics.json").read_text())
    assert set(m["test"]) == {"main", "best"} and m["best_path"] == "main"
    assert 0.0 <= m["test"]["main"]["acc"] <= 1.0
    log = [json.loads(x) for x in (run / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 1 and math.isfinite(log[0]["train_total"])
