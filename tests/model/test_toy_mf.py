"""A new MF path kind in one file: toy triangular memberships registered here (its layer,
loss and centers), a method using it, and a tiny cell trained and evaluated with it end
to end (tiny random Llama, synthetic FRoG-like data)."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn

from cells import tiny_cell
from dfil.cli import main
from dfil.config.cell import HeadsConfig
from dfil.core.methods import METHODS, MethodSpec, method_spec, register_method
from dfil.data.synthetic import write_frog_like
from dfil.engine.checkpoint import read_checkpoint
from dfil.model.dual_path import DualPathHeads
from dfil.model.registry import MF_KINDS, MFKind, mf_kind, register_mf


class Triangles(nn.Module):
    """Q fixed triangles of half-width 1/Q centred at (k + 1/2) / Q: scores
    ``Q * (1/Q - |p - c_k|)``, ``[B] -> [B, Q]``."""

    def __init__(self, num_classes: int):
        super().__init__()
        q = num_classes
        self.register_buffer("c", (torch.arange(q, dtype=torch.float32) + 0.5) / q)

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        q = self.c.numel()
        return q * (1.0 / q - (p[:, None] - self.c).abs())


class Triangle(MFKind):
    """A toy MF path: fixed triangles, read through their centers; the loss is the CE of
    the base kind, halved."""

    name = "toy_triangle"

    def build(self, num_classes: int, heads) -> nn.Module:
        return Triangles(num_classes)

    def loss(self, scores, y, class_weights):
        return 0.5 * super().loss(scores, y, class_weights)

    def centers(self, module):
        return module.c


@pytest.fixture(scope="module")
def toy_mf():
    """The toy MF kind and a method ``toy_mf`` using it beside the classifier."""
    register_mf(Triangle())
    register_method(MethodSpec("toy_mf", main="classifier", numeric=True,
                               mf="toy_triangle"))
    yield "toy_mf"
    MF_KINDS.pop("toy_triangle")
    METHODS.pop("toy_mf")


def test_the_toy_mf_scores_its_triangles_and_the_heads_ask_it_for_centers(toy_mf):
    kind = mf_kind("toy_triangle")
    layer = kind.build(4, None)
    scores = layer(torch.tensor([0.125, 0.6]))  # centers 0.125, 0.375, 0.625, 0.875
    assert scores[0].tolist() == pytest.approx([1.0, 0.0, -1.0, -2.0])
    assert scores[1].tolist() == pytest.approx([-0.9, 0.1, 0.9, -0.1])
    y = torch.tensor([0, 2])
    ce = -(torch.log_softmax(scores, -1)[[0, 1], y]).mean()
    assert kind.loss(scores, y, None).item() == pytest.approx(0.5 * ce.item(), rel=1e-6)
    heads = DualPathHeads(6, 4, method_spec(toy_mf), HeadsConfig())
    assert heads.centers().tolist() == pytest.approx([0.125, 0.375, 0.625, 0.875])
    assert heads.widths() is None


def test_an_mf_kind_is_refused_twice_and_an_unknown_one_named(toy_mf):
    with pytest.raises(ValueError, match="'toy_triangle' is empty or already registered"):
        register_mf(Triangle())
    with pytest.raises(ValueError, match=r"unknown MF kind 'triangel'; registered: \["):
        mf_kind("triangel")


@pytest.mark.slow
def test_a_tiny_cell_trains_and_evaluates_with_the_toy_mf(tmp_path, toy_mf):
    frog = tmp_path / "frog"
    write_frog_like(frog, seed=0, n_easy=96, n_hard=40)
    cell = tiny_cell(tmp_path, frog, "toy", epochs=1)
    cell.write_text(cell.read_text().replace("method: dfil", f"method: {toy_mf}"))
    run = tmp_path / "run"
    assert main(["train", "--cell", str(cell), "--out", str(run)]) == 0
    assert main(["evaluate", "--run", str(run)]) == 0
    config, state, _ = read_checkpoint(run / "model.safetensors")
    assert config.method == "toy_mf"
    assert state["heads.mf.c"].tolist() == pytest.approx([(k + 0.5) / 8 for k in range(8)])
    m = json.loads((run / "metrics.json").read_text())
    assert {"main", "mf"} <= set(m["test"])
    assert 0.0 <= m["test"]["mf"]["acc"] <= 1.0
