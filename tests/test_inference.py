import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfil.core.inference import compose, ensemble, entails, nearest_center, shift_factor, softmax
from dfil.core.quantifiers import QURE_CENTERS

ordered_centers = st.lists(
    st.floats(0.01, 0.99, allow_nan=False), min_size=2, max_size=10, unique=True
).map(sorted)


def test_nearest_center_hand_computed_and_ties_to_smallest_index():
    c = [0.2, 0.4, 0.8]
    assert nearest_center([0.0, 0.29, 0.3, 0.31, 0.6, 0.61, 1.0], c).tolist() == [
        0, 0, 0, 1, 1, 2, 2
    ]
    assert nearest_center(0.6, [0.4, 0.8]).item() == 0  # exact midpoint -> smaller index
    assert nearest_center(np.full((2, 3), 0.79), c).shape == (2, 3)


def test_compose_hand_computed_worked_example():
    # App. F: "most of most of the 100 students" at p_base = 0.8 under QuRe centers:
    # 0.78 * 0.78 * 0.8 = 0.48672, nearest QuRe center is some (0.40), not moderate (0.58).
    assert compose(0.8, QURE_CENTERS, [6, 6]).item() == 4
    assert shift_factor(QURE_CENTERS, [6, 6]) == pytest.approx(0.6084)
    assert compose(0.8, QURE_CENTERS, []).item() == nearest_center(0.8, QURE_CENTERS).item()


def test_compose_per_row_outer():
    p = np.array([0.9, 0.9])
    outer = np.array([[6, 6], [7, 7]])
    assert compose(p, QURE_CENTERS, outer).tolist() == [
        nearest_center(0.9 * 0.78 * 0.78, QURE_CENTERS).item(),
        nearest_center(0.9 * 0.97 * 0.97, QURE_CENTERS).item(),
    ]
    with pytest.raises(ValueError, match="out of range"):
        compose(p, QURE_CENTERS, [8])


@settings(max_examples=200, deadline=None)
@given(
    ordered_centers,
    st.lists(st.integers(0, 9), min_size=1, max_size=4),
    st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=50),
)
@pytest.mark.slow
def test_thm2_composition_bounded_by_base_class_and_monotone(centers, outer, ps):
    outer = [o % len(centers) for o in outer]
    p = np.sort(np.asarray(ps))
    base = nearest_center(p, centers)
    for depth in range(1, len(outer) + 1):
        composed = compose(p, centers, outer[:depth])
        assert np.all(composed <= base)  # (ii) never above the base class
        assert np.all(np.diff(composed) >= 0)  # (iii) monotone in p at every depth
        deeper = compose(p, centers, outer[: depth + 1]) if depth < len(outer) else composed
        assert np.all(deeper <= composed)


def test_entails_by_center_order():
    assert entails(QURE_CENTERS, 2, 6) and entails(QURE_CENTERS, 3, 3)
    assert not entails(QURE_CENTERS, 7, 0)
    unordered = [0.5, 0.1]
    assert not entails(unordered, 0, 1)


def test_ensemble_and_softmax():
    main = np.array([[0.7, 0.3]])
    mf = softmax(np.array([[0.0, np.log(3.0)]]))
    assert mf.tolist()[0] == pytest.approx([0.25, 0.75])
    assert ensemble(main, mf, 0.5).tolist()[0] == pytest.approx([0.475, 0.525])
    assert ensemble(main, mf, 1.0).tolist() == main.tolist()
    with pytest.raises(ValueError, match="alpha"):
        ensemble(main, mf, 1.5)
    with pytest.raises(ValueError, match="shape mismatch"):
        ensemble(main, np.ones((1, 3)), 0.5)


def test_nearest_center_ordered_fast_path_agrees_with_distances():
    rng = np.random.default_rng(0)
    centers = np.sort(rng.random(8))
    p = rng.random(10_000)
    by_distance = np.abs(p[:, None] - centers).argmin(axis=1)
    assert np.array_equal(nearest_center(p, centers), by_distance)


def test_nearest_center_unordered_centers_use_distances():
    assert nearest_center([0.05, 0.5, 0.95], [0.9, 0.1, 0.5]).tolist() == [1, 2, 0]


def test_public_names_are_the_core_functions():
    import dfil.core.inference as core
    import dfil.inference as public
    from dfil.core.metrics import pairwise_violations as core_violations
    from dfil.metrics import pairwise_violations
    assert public.nearest_center is core.nearest_center and public.compose is core.compose
    assert pairwise_violations is core_violations
