"""A positive control's input: the true proportion appended to frozen features."""

import pytest
import torch

from dfil.config.cell import ModelConfig
from dfil.engine.control import append_proportion, control_features, proportion_column
from dfil.model.dual_path import build_heads
from dfil.util.errors import ConfigError


def test_append_proportion_adds_one_column():
    feats = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out = append_proportion(feats, [0.0, 0.25, 1.0])
    assert out.shape == (3, 3) and out.dtype == feats.dtype
    assert out.tolist() == [[1.0, 2.0, 0.0], [3.0, 4.0, 0.25], [5.0, 6.0, 1.0]]
    assert feats.shape == (3, 2)  # the cached features are left as they are


def test_a_control_reads_the_features_and_the_proportion_or_the_proportion_alone():
    feats = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert control_features(feats, [0.5, 0.75], "proportion").tolist() == [
        [1.0, 2.0, 0.5], [3.0, 4.0, 0.75]]
    assert control_features(feats, [0.5, 0.75], "proportion_only").tolist() == [
        [0.0, 0.0, 0.5], [0.0, 0.0, 0.75]]
    assert feats.tolist() == [[1.0, 2.0], [3.0, 4.0]]  # the cached features untouched
    with pytest.raises(ValueError, match="unknown control input 'none'"):
        control_features(feats, [0.5, 0.75], "none")


def test_append_proportion_refuses_a_wrong_length_or_range():
    with pytest.raises(ValueError, match="2 proportions for 3 feature rows"):
        append_proportion(torch.zeros(3, 2), [0.1, 0.2])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        append_proportion(torch.zeros(2, 2), [0.1, 1.5])


@pytest.mark.parametrize("columns, text, given, found", [
    (["text", "p", "label"], "text", None, "p"),           # a task split
    (["text", "p_base", "depth"], "text", None, "p_base"),  # compositional, naturalistic
    (["text_a", "text_b", "p_a", "p_b"], "text_b", None, "p_b"),  # CSMC
    (["text_i", "text_j", "p_i", "p_j"], "text_i", None, "p_i"),  # entailment
    (["text", "p", "q"], "text", "q", "q"),                 # the caller's column first
])
def test_proportion_column(columns, text, given, found):
    assert proportion_column(columns, text, given) == found


def test_proportion_column_names_what_is_missing():
    with pytest.raises(ConfigError, match=r"beside 'text_a'.*\['p_a'\]"):
        proportion_column(["text_a", "p_b"], "text_a")


def test_heads_read_one_more_dimension_for_a_control():
    plain = ModelConfig(method="dfil", adapter="none")
    control = ModelConfig(method="dfil", adapter="none",
                          heads={"control_input": "proportion"})
    first = [m for m in build_heads(control, 8).modules() if isinstance(m, torch.nn.Linear)][0]
    plain_first = [m for m in build_heads(plain, 8).modules()
                   if isinstance(m, torch.nn.Linear)][0]
    assert (first.in_features, plain_first.in_features) == (9, 8)


def test_control_input_needs_frozen_features():
    from dfil.config.cell import check_feature_norm

    with pytest.raises(ConfigError, match="control_input.*needs model.adapter: none"):
        check_feature_norm(ModelConfig(method="dfil", adapter="lora",
                                       heads={"control_input": "proportion"}))
