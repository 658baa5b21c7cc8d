"""The evaluation protocols' pure maths (dfil.evaluate.protocols), on hand-computed cases."""

import numpy as np
import pytest

from dfil.contracts.predcheck import accuracy_block
from dfil.engine.predict import Predictions
from dfil.evaluate.protocols import (
    compositional_metrics,
    csmc_metrics,
    entailment_metrics,
    grid_check,
    ipr_metrics,
    naturalistic_metrics,
    path_labels,
    select_alpha,
)

CENTERS = np.array([0.1, 0.5, 0.9])  # midpoints 0.3 and 0.7


def test_accuracy_block_hand_computed():
    block = accuracy_block(np.array([0, 1, 1, 2]), np.array([0, 1, 2, 2]),
                           np.array([0.1, 0.3, 0.5, 0.9]), 4)
    assert block["acc"] == 0.75 and block["n"] == 4
    assert block["per_class_acc"] == [1.0, 1.0, 0.5, None]
    # 6 pairs with p_i < p_j, predictions non-decreasing along p: no violation
    assert (block["mono_pairs"], block["mono_violations"], block["mono_rate"]) == (6, 0, 0.0)
    flipped = accuracy_block(np.array([2, 0]), np.array([0, 0]), np.array([0.1, 0.2]), 3)
    assert (flipped["mono_violations"], flipped["mono_rate"], flipped["mono_magnitude"]) == (
        1, 1.0, 2.0)
    assert "mono_rate" not in accuracy_block(np.array([0]), np.array([0]), None, 2)


def test_path_labels_and_alpha_first_of_equals():
    main = np.array([[0.9, 0.1], [0.9, 0.1]])
    mf_scores = np.array([[-10.0, 10.0], [-10.0, 10.0]])  # softmax ~ [0, 1]
    preds = Predictions(main_probs=main, p=np.array([0.8, 0.9]), mf_scores=mf_scores)
    labels = path_labels(preds, np.array([0.2, 0.8]), alpha=0.5)
    # ensemble at 0.5: [0.45, 0.55] -> class 1
    assert {k: v.tolist() for k, v in labels.items()} == {
        "main": [0, 0], "mf": [1, 1], "ensemble": [1, 1]}
    # gold [1, 1]: alpha 1 scores 0, alpha 0.5 and 0 both score 1 -> the first of those
    assert select_alpha(preds, np.array([1, 1]), [1.0, 0.5, 0.0]) == 0.5
    assert select_alpha(Predictions(main, None, None), np.array([1, 1]), [0.5]) is None


def test_grid_check_nearest_center_is_monotone():
    out = grid_check(CENTERS, np.array([0.05, 0.4, 0.05]), [11])
    assert out["11"]["nearest_center"] == 0 and out["11"]["nearest_center_rate"] == 0.0
    # a wide middle MF wins p = 1.0 back from the last class under Gaussian argmax:
    # |1.0-0.9|/0.05 = 2 > |1.0-0.5|/0.4 = 1.25 -> class 1 after class 2, a violation
    assert out["11"]["gaussian_argmax"] > 0


def test_compositional_hand_computed():
    rows = [{"depth": 2, "qure_label": 0, "p_base": 0.5, "outer": [1]},
            {"depth": 3, "qure_label": 2, "p_base": 0.9, "outer": [2, 2]}]
    # shift factors: c1 = 0.5 and c2 * c2 = 0.81; self truths: nc(0.25) = 0, nc(0.729) = 2
    preds = Predictions(main_probs=None, p=np.array([0.7, 0.9]), mf_scores=np.zeros((2, 3)))
    out = compositional_metrics(rows, preds, CENTERS, main=np.array([0, 0]))
    # from text: nc(0.35) = 1 (wrong), nc(0.729) = 2 (right)
    assert out["from_text"]["self"] == {"all": 0.5, "depth2": 0.0, "depth3": 1.0}
    assert out["oracle"]["self"]["all"] == 1.0
    assert out["text_only"]["qure"] == {"all": 0.5, "depth2": 1.0, "depth3": 0.0}
    assert out["extraction_error"] == pytest.approx(0.1)


def test_csmc_ties_knob():
    rows = [{"domain": "a"}, {"domain": "a"}, {"domain": "b"}]
    a = {"mf": np.array([0, 1, 2])}
    b = {"mf": np.array([1, 1, 1])}
    consistent = csmc_metrics(rows, a, b, "consistent")["mf"]
    assert consistent["consistency"] == pytest.approx(2 / 3)
    assert consistent["by_domain"] == {"a": 1.0, "b": 0.0}
    assert consistent["per_pair"] == [1, 1, 0]
    assert csmc_metrics(rows, a, b, "violation")["mf"]["consistency"] == pytest.approx(1 / 3)


def test_ipr_entailment_naturalistic_hand_computed():
    rows = [{"label": 1, "category": "x", "p": 0.45}, {"label": 2, "category": "y", "p": 0.2}]
    preds = Predictions(main_probs=None, p=np.array([0.5, 0.65]), mf_scores=np.zeros((2, 3)))
    ipr = ipr_metrics(rows, preds, CENTERS, main=None)
    assert ipr["text"]["exact"] == 0.5 and ipr["text"]["off_by_one"] == 1.0  # 1, 1
    assert ipr["oracle"]["exact"] == 0.5 and ipr["oracle"]["y"] == {"exact": 0.0,
                                                                    "off_by_one": 0.0}
    ent = entailment_metrics([{"qi": 0, "qj": 2, "entails": True},
                              {"qi": 2, "qj": 1, "entails": True}], CENTERS,
                             {"mf": np.array([0, 2])}, {"mf": np.array([1, 1])})
    assert ent == {"mf_centers": 0.5, "labels_mf": 0.5}
    nat = naturalistic_metrics([{"qure_label": 1, "outer": [2]}],
                               Predictions(None, np.array([0.6]), np.zeros((1, 3))), CENTERS,
                               main=np.array([1]))
    assert nat == {"text_only": 1.0, "from_text": 1.0}  # 0.6 * 0.9 = 0.54 -> class 1
