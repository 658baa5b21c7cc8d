import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfil.core.metrics import Violations, pairwise_violations


def brute_force(p, pred):
    p, pred = np.asarray(p), np.asarray(pred)
    less = p[:, None] < p[None, :]
    bad = less & (pred[:, None] > pred[None, :])
    diff = (pred[:, None] - pred[None, :]).astype(float)
    n_bad = int(bad.sum())
    return int(less.sum()), n_bad, float(diff[bad].sum() / n_bad) if n_bad else 0.0


def test_hand_computed():
    # p order 0.1 < 0.2 < 0.3 with preds 2, 0, 1: violations (0.1,0.2) by 2 and (0.1,0.3) by 1.
    v = pairwise_violations([0.2, 0.1, 0.3], [0, 2, 1])
    assert v == Violations(rate=2 / 3, mean_magnitude=1.5, n_pairs=3, n_violations=2)


def test_ties_in_p_are_excluded():
    v = pairwise_violations([0.5, 0.5, 0.5, 0.7], [3, 1, 0, 2])
    assert v.n_pairs == 3 and v.n_violations == 1 and v.mean_magnitude == 1.0


def test_degenerate_inputs():
    assert pairwise_violations([], []).n_pairs == 0
    assert pairwise_violations([0.3], [1]) == Violations(0.0, 0.0, 0, 0)
    with pytest.raises(ValueError, match="differ in length"):
        pairwise_violations([0.1, 0.2], [1])


@pytest.mark.parametrize("seed", range(20))
def test_equals_brute_force_on_random_data_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    p = rng.integers(0, 20, n) / 19  # many ties in p
    pred = rng.integers(0, 8, n)  # many ties in pred
    v = pairwise_violations(p, pred)
    n_pairs, n_bad, mag = brute_force(p, pred)
    assert (v.n_pairs, v.n_violations) == (n_pairs, n_bad)
    assert v.mean_magnitude == pytest.approx(mag)
    assert v.rate == pytest.approx(n_bad / n_pairs)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
                  st.one_of(st.integers(-5, 40), st.sampled_from([0.5, 2.5, 1e6]))),
        min_size=0, max_size=60,
    )
)
@pytest.mark.slow
def test_property_equals_brute_force_any_values(rows):
    p = [r[0] for r in rows]
    pred = [r[1] for r in rows]
    v = pairwise_violations(p, pred)
    n_pairs, n_bad, mag = brute_force(p, pred) if rows else (0, 0, 0.0)
    assert (v.n_pairs, v.n_violations) == (n_pairs, n_bad)
    assert v.mean_magnitude == pytest.approx(mag)


@pytest.mark.slow
def test_million_points_monotone_predictions_have_no_violations():
    p = np.random.default_rng(0).random(10**6)
    v = pairwise_violations(p, np.floor(p * 8).astype(int))
    assert v.n_violations == 0 and v.n_pairs == 10**6 * (10**6 - 1) // 2
