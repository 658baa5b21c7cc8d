"""A plan's grid file keeps the source grid's acceptance section only where it runs the
acceptance cell (smoke.yaml: its cell and its 4-bit backbone are tiny-llama's), and is no
strict grid: it runs part of its source, whose tables print the rest as not run."""

from __future__ import annotations

from dfil.config.grid import Grid
from dfil.config.yamlfile import load_yaml
from dfil.plan.planfile import plan_config
from dfil.render import load_specs
from dfil.render.coordinates import check_coordinates
from snakemake_cli import ROOT

CELL = "frog/tiny-llama/dfil/lam0.5/nfull/qure/seed42"
OTHER = "frog/tiny-llama/finetune/lamna/nfull/na/seed42"


def test_the_acceptance_section_follows_its_cell_into_the_plan():
    config = load_yaml(ROOT / "config/smoke.yaml")
    grid = Grid(config)
    kept = plan_config(config, grid, [CELL, OTHER], [42])
    assert kept["acceptance"] == config["acceptance"]
    assert Grid(kept).acceptance()["cell"] == (CELL, "tiny-llama")
    dropped = plan_config(config, grid, [OTHER], [42])
    assert "acceptance" not in dropped
    assert Grid(dropped).acceptance() == {}


def test_a_plan_is_not_a_strict_grid_and_its_tables_load():
    config = load_yaml(ROOT / "config/smoke.yaml")
    assert config["render"]["strict"] is True
    plan = plan_config(config, Grid(config), [OTHER], [42])
    assert "strict" not in plan["render"]
    assert plan["render"]["backbones"] == config["render"]["backbones"]  # the rest kept
    tables = ROOT / "config/tables.yaml"
    check_coordinates(load_specs(tables), plan, tables)  # one finetune cell: no error
