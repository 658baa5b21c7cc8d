import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dfil.core.inference import gaussian_argmax, nearest_center
from dfil.core.metrics import pairwise_violations
from dfil.core.quantifiers import QURE_CENTERS
from dfil.model.mf import (
    OrderedGaussianMF,
    ProportionClassifier,
    UnorderedGaussianMF,
    centers_from_raw,
    raw_from_centers,
)

raw_vectors = st.lists(
    st.floats(-30, 30, allow_nan=False, allow_infinity=False), min_size=8, max_size=8
)


@settings(max_examples=300, deadline=None)
@given(raw_vectors)
def test_centers_strictly_increasing_with_last_pinned(raw):
    c = centers_from_raw(torch.tensor(raw, dtype=torch.float64))
    assert torch.all(torch.diff(c) > 0)
    assert c[0] >= 0.02
    assert float(c[-1]) == pytest.approx(0.98, abs=1e-12)


def test_centers_hand_computed_uniform():
    # delta_raw = 0: softmax 1/8, +eps and renormalised stays 1/8 -> .02 + .96 k/8, k=1..8.
    c = centers_from_raw(torch.zeros(8, dtype=torch.float64))
    expected = [0.02 + 0.96 * k / 8 for k in range(1, 9)]
    assert c.tolist() == pytest.approx(expected, abs=1e-12)
    assert c[0].item() == pytest.approx(0.14)


def test_qure_init_realised_centers_paper_inversion():
    # App. B.3 inversion, renormalised: the inventory's (.020 .081 .182 .283 .404 .586 .788 .980).
    mf = OrderedGaussianMF(init="qure")
    c = mf.centers().detach().numpy()
    assert c == pytest.approx([0.020, 0.081, 0.182, 0.283, 0.404, 0.586, 0.788, 0.980], abs=1e-3)
    steps = np.diff(np.array(QURE_CENTERS) - 0.02, prepend=0.0) / 0.96
    expected = 0.02 + 0.96 * np.cumsum(steps / steps.sum())
    assert c[1:] == pytest.approx(expected[1:], abs=2e-4)


def test_qure_init_pin_last_matches_first_seven():
    c = OrderedGaussianMF(init="qure", qure_inversion="pin_last").centers().detach().numpy()
    assert c[:7] == pytest.approx(QURE_CENTERS[:7], abs=3e-4)
    assert c[7] == pytest.approx(0.98)  # .97 is unreachable: c_7 is pinned


def test_explicit_and_uniform_inits():
    target = [0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 0.98]
    c = OrderedGaussianMF(init=target).centers().detach().numpy()
    assert c == pytest.approx(target, abs=3e-4)
    u = OrderedGaussianMF(init="uniform").centers().detach().numpy()
    assert u == pytest.approx([0.14, 0.26, 0.38, 0.50, 0.62, 0.74, 0.86, 0.98], abs=1e-6)
    even = OrderedGaussianMF(init="uniform", uniform_mode="evenly").centers().detach().numpy()
    assert even[1:] == pytest.approx(np.linspace(0.02, 0.98, 8)[1:], abs=3e-4)


@pytest.mark.parametrize(
    "bad",
    [
        [0.1] * 8,
        [0.5, 0.4, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95],
        [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
    ],
)
def test_explicit_init_rejects_invalid_centers(bad):
    with pytest.raises(ValueError, match="centers"):
        OrderedGaussianMF(init=bad)


def test_widths_and_forward_hand_computed():
    mf = OrderedGaussianMF(init="uniform")
    assert mf.widths().detach().numpy() == pytest.approx([0.1] * 8)
    mu = mf(torch.tensor([0.14, 0.24]))
    assert mu.shape == (2, 8)
    assert mu[0, 0].item() == pytest.approx(1.0)
    assert mu[1, 0].item() == pytest.approx(np.exp(-(0.1**2) / (2 * 0.01)), rel=1e-5)
    assert sum(p.numel() for p in mf.parameters()) == 16


def test_raw_from_centers_round_trip_for_reachable_targets():
    raw = torch.randn(8, dtype=torch.float64)
    c = centers_from_raw(raw)
    back = centers_from_raw(raw_from_centers(c.tolist()).double())
    assert back.numpy() == pytest.approx(c.numpy(), abs=1e-6)


def test_ablation_banks_have_sixteen_params():
    assert sum(p.numel() for p in UnorderedGaussianMF().parameters()) == 16
    assert sum(p.numel() for p in ProportionClassifier().parameters()) == 16
    assert ProportionClassifier()(torch.rand(5)).shape == (5, 8)


ordered_centers = st.lists(
    st.floats(0.0, 1.0, allow_nan=False), min_size=2, max_size=12, unique=True
).map(sorted)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(ordered_centers)
def test_thm1_nearest_center_zero_violations_on_million_point_grid(centers):
    grid = np.linspace(0.0, 1.0, 10**6)
    labels = nearest_center(grid, centers)
    assert np.all(np.diff(labels) >= 0)
    assert pairwise_violations(grid, labels).n_violations == 0


def test_remark_gaussian_argmax_flip_back_exists_for_unequal_widths():
    # Wider Gaussian (class 0) recrosses the narrower one (class 1) in its right tail:
    # exterior root (s1 c0 - s0 c1)/(s1 - s0) = (0.05*0.2 - 0.3*0.3)/(0.05-0.3) = 0.32.
    centers, widths = [0.2, 0.3], [0.3, 0.05]
    grid = np.linspace(0, 1, 10**4)
    argmax = gaussian_argmax(grid, centers, widths)
    assert pairwise_violations(grid, argmax).n_violations > 0
    assert argmax[np.searchsorted(grid, 0.31)] == 1 and argmax[np.searchsorted(grid, 0.33)] == 0
    assert pairwise_violations(grid, nearest_center(grid, centers)).n_violations == 0
