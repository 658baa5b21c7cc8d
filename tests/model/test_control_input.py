"""A positive control's appended proportion reaches the MLP heads past their LayerNorm."""

import math

import pytest
import torch

from dfil.config.cell import HeadsConfig
from dfil.core.methods import method_spec
from dfil.model.dual_path import DualPathHeads
from dfil.model.heads import MLPHead


def _gelu_of_last_column(head: MLPHead) -> MLPHead:
    """Weights that make ``head`` return GELU of its Linear's last input column."""
    with torch.no_grad():
        lin, out = head.net[1], head.net[3]
        lin.weight.zero_(), lin.bias.zero_(), out.weight.zero_(), out.bias.zero_()
        lin.weight[0, -1] = 1.0
        out.weight[0, 0] = 1.0
    return head


def test_a_raw_column_skips_the_layernorm():
    head = _gelu_of_last_column(MLPHead(3, 1, hidden=2, raw=1))
    h = torch.tensor([[1.0, 3.0, 0.7], [10.0, 30.0, 0.7]])
    # GELU(0.7) = 0.7 * Phi(0.7) = 0.7 * 0.7580363 = 0.5306254, whatever the other columns
    expected = 0.7 * 0.5 * (1 + math.erf(0.7 / math.sqrt(2)))
    assert head(h).squeeze(-1).tolist() == pytest.approx([expected, expected], abs=1e-6)
    assert expected == pytest.approx(0.5306254, abs=1e-6)


def test_without_raw_columns_the_layernorm_mixes_the_last_column():
    head = _gelu_of_last_column(MLPHead(3, 1, hidden=2))
    # LN([1, 3, 0.7]): mean 1.5667, sd 1.0209 -> last column (0.7 - 1.5667) / 1.0209 = -0.8489
    got = head(torch.tensor([[1.0, 3.0, 0.7]])).item()
    z = (0.7 - 4.7 / 3) / math.sqrt(((1 - 4.7 / 3) ** 2 + (3 - 4.7 / 3) ** 2
                                     + (0.7 - 4.7 / 3) ** 2) / 3 + 1e-5)
    assert z == pytest.approx(-0.8489, abs=1e-4)
    assert got == pytest.approx(z * 0.5 * (1 + math.erf(z / math.sqrt(2))), abs=1e-5)


def test_raw_columns_must_leave_a_column_to_normalise():
    with pytest.raises(ValueError, match=r"raw columns 3 must lie in \[0, 3\)"):
        MLPHead(3, 1, raw=3)


def test_a_control_cells_heads_read_the_proportion_raw():
    spec = method_spec("dfil")
    control = DualPathHeads(5, 8, spec, HeadsConfig(control_input="proportion"))
    plain = DualPathHeads(5, 8, spec, HeadsConfig())
    assert control.numeric.mlp.raw == 1 and control.main.raw == 1
    assert plain.numeric.mlp.raw == 0 and plain.main.raw == 0
    # the same parameter count but the LayerNorm's: 2 x 4 against 2 x 5
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(plain) - count(control) == 2 * 2
