"""Every name the grid's render map and controls give is checked against the grid when it
is read: a typo is one line naming the key, the value and what the grid has."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from dfil.config.grid import Grid
from dfil.util.errors import ConfigError

SMOKE = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "smoke.yaml")
                       .read_text())


def _refused(edit) -> str:
    config = copy.deepcopy(SMOKE)
    edit(config)
    with pytest.raises(ConfigError) as err:
        Grid(config)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_the_shipped_smoke_grid_passes():
    Grid(SMOKE)


def test_a_render_map_backbone_the_grid_does_not_declare_is_refused():
    def edit(config):
        config["render"]["backbones"]["qwen2.5-7b"] = "tiny-lama"

    assert _refused(edit) == ("config render.backbones.qwen2.5-7b: 'tiny-lama' is not in "
                              "backbones (did you mean 'tiny-llama'? the grid has "
                              "'tiny-llama')")


def test_a_render_map_lambda_no_group_runs_is_refused_with_what_runs():
    def edit(config):
        config["render"]["lambdas"]["0.1"] = 0.7

    assert _refused(edit) == ("config render.lambdas.0.1: 0.7 is not a lambda any group runs "
                              "(the grid runs 0.5)")

    def key(config):
        config["render"]["lambdas"] = {"low": 0.5}

    assert _refused(key) == ("config render.lambdas: key 'low' is not a lambda (a finite "
                             "number, as the paper's tables name it)")


def test_a_render_map_seed_set_or_task_the_grid_does_not_declare_is_refused():
    def seeds(config):
        config["render"]["seed_sets"]["three"] = "won"

    assert _refused(seeds) == ("config render.seed_sets.three: 'won' is not in seed_sets "
                               "(did you mean 'one'? the grid has 'control', 'one')")

    def task(config):
        config["render"]["tasks"]["sst5"] = "ordinal"

    message = _refused(task)
    assert message.startswith("config render.tasks.sst5: 'ordinal' is not in tasks (")
    assert "'ordinal_standin'" in message


def test_a_render_map_variant_may_be_the_plain_cells_but_not_a_typo():
    def edit(config):
        config["render"]["variants"]["fewshot"] = "fewshto"

    assert _refused(edit).startswith("config render.variants.fewshot: 'fewshto' is not in "
                                     "variants (did you mean 'fewshot'? the grid has '', ")


def test_a_control_metric_that_is_no_measurement_is_refused():
    def edit(config):
        config["controls"]["ordinal"]["metric"] = "test.main.accc"

    assert _refused(edit) == ("config controls.ordinal.metric: 'accc' is not a key of "
                              "test.main (did you mean 'acc'? it has acc, mono_magnitude, "
                              "mono_pairs, mono_rate, mono_violations, n, per_class_acc)")


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_a_lambda_must_be_finite(value):
    def edit(config):
        config["groups"]["all_methods"]["lambdas"] = [yaml.safe_load(value)]

    message = _refused(edit)
    assert message.startswith("config groups.all_methods.lambdas[0]: must be ")
