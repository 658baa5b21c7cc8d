"""The grid's positive controls: each control cell paired with its reference cell, and
refused unless the two differ only in their input."""

import copy
from pathlib import Path

import pytest
import yaml

from dfil.config.controls import CONTROL_MIN_SEEDS
from dfil.config.grid import Grid
from dfil.util.errors import ConfigError

CONFIG = Path(__file__).resolve().parents[1] / "config"


def _grid(name: str) -> dict:
    return yaml.safe_load((CONFIG / f"{name}.yaml").read_text())


@pytest.mark.parametrize("name", ["config", "smoke"])
def test_every_family_has_a_control_in_the_shipped_grids(name):
    grid = Grid(_grid(name))
    assert {c.family for c in grid.spec.controls.values()} == {
        "compositional", "monotonicity", "ordinal"}
    for cname in grid.spec.controls:
        for control, reference in grid.control_pairs(cname):
            assert grid.cells[control].config["model"]["heads"]["control_input"] in (
                "proportion", "proportion_only")
            assert grid.cells[reference].config["model"]["heads"]["control_input"] == "none"


def test_embedded_controls_pair_with_their_reference_and_crosstask_cells():
    grid = Grid(_grid("config"))
    assert grid.control_pairs("compositional") == [
        (f"frog/smollm2-135m/dfil+control_alone/lam0.5/nfull/qure/seed{s}",
         f"frog/smollm2-135m/dfil+control_ref/lam0.5/nfull/qure/seed{s}")
        for s in (42, 123, 456)]
    assert grid.control_pairs("ordinal") == [
        (f"ordinal_standin/smollm2-135m/dfil+control/lam0.5/nfull/uniform/seed{s}",
         f"ordinal_standin/smollm2-135m/dfil/lam0.5/nfull/uniform/seed{s}")
        for s in (42, 123, 456)]


@pytest.mark.parametrize("name", ["config", "smoke"])
def test_every_control_runs_on_three_seeds(name):
    grid = Grid(_grid(name))
    for cname in grid.spec.controls:
        assert len(grid.control_pairs(cname)) == CONTROL_MIN_SEEDS == 3


def test_a_control_on_fewer_than_three_seeds_is_refused():
    config = copy.deepcopy(_grid("smoke"))
    config["seed_sets"]["control"] = [42, 123]
    with pytest.raises(ConfigError, match=r"controls\.compositional: group 'control_frog' "
                                          r"runs on 2 seed\(s\) \(123, 42\); a control "
                                          r"needs at least 3"):
        Grid(config)


@pytest.mark.parametrize("name", ["config", "smoke"])
def test_the_compositional_control_declares_its_ceiling(name):
    assert Grid(_grid(name)).spec.controls["compositional"].ceiling == 0.95


def test_a_control_that_changes_more_than_its_input_is_refused():
    config = copy.deepcopy(_grid("config"))
    config["variants"]["control_alone"]["cell"]["train"] = {"epochs": 3}
    with pytest.raises(ConfigError, match=r"controls\.compositional: cell frog/smollm2-135m/"
                                          r"dfil\+control_alone.*differs only in"):
        Grid(config)


def test_a_control_without_the_proportion_is_refused():
    config = copy.deepcopy(_grid("config"))
    config["variants"]["control"]["cell"] = {}
    with pytest.raises(ConfigError, match="none there, proportion here"):
        Grid(config)


def test_a_control_naming_an_unknown_group_is_refused():
    config = copy.deepcopy(_grid("config"))
    config["controls"]["ordinal"]["reference"] = "crosstsk"
    with pytest.raises(ConfigError, match=r"controls\.ordinal\.reference: 'crosstsk' is not "
                                          "in groups"):
        Grid(config)


def test_a_control_with_no_reference_cell_is_refused():
    config = copy.deepcopy(_grid("config"))
    config["controls"]["ordinal"]["reference"] = "main"  # frog cells only
    with pytest.raises(ConfigError, match=r"needs a cell of group 'main'.*none there"):
        Grid(config)


@pytest.mark.parametrize("name", ["config", "smoke"])
def test_a_control_reads_its_reference_cells_cached_features(name):
    from dfil.engine.featuresets import feature_group, item_sets

    grid = Grid(_grid(name))
    for cname in grid.spec.controls:
        for control, reference in grid.control_pairs(cname):
            a, b = grid.cells[control].config, grid.cells[reference].config
            assert feature_group(a) == feature_group(b)  # no frozen_features job of its own
            assert item_sets(a) == item_sets(b)
