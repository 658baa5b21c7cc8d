import json
from pathlib import Path

import pytest
import yaml

from dfil.cli import main
from dfil.config import ConfigError
from dfil.grid import Grid, grid_schema, load_grid_files

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "config"


def paper() -> dict:
    return yaml.safe_load((CONFIGS / "paper.yaml").read_text())


def test_committed_schema_is_current():
    assert json.loads((CONFIGS / "schema.json").read_text()) == grid_schema()


@pytest.mark.parametrize("name", ["paper", "config", "smoke"])
def test_shipped_configs_validate(name):
    grid = load_grid_files([CONFIGS / f"{name}.yaml"])
    assert grid.cells


def test_paper_grid_size_reuse_and_resources():
    grid = Grid(paper())
    trained = [k for k in grid.cells if "/zero_shot/" not in k]
    assert len(trained) >= 250
    # one fine-tune cell per (backbone, seed) whichever lambda its groups list
    key = "frog/qwen2.5-7b/finetune/lamna/nfull/na/seed42"
    assert {"G1", "G8"} <= set(grid.cell(key).groups)
    assert grid.resources("frog/qwen2.5-72b/dfil/lam0.1/nfull/qure/seed42")["gpu"] == 1
    assert grid.cell("frog/qwen2.5-72b/dfil/lam0.1/nfull/qure/seed42").config["model"][
        "backbone"]["quantized"] is True
    phi = grid.cell("sst5/phi-3.5-mini/dfil/lam0.5/nfull/uniform/seed42").config
    assert phi["model"]["lora"]["targets"] == ["q", "k", "v", "o"]
    few = grid.cell("frog/qwen2.5-7b/dfil+fewshot/lam0.5/n16/qure/seed42").config
    assert few["model"]["loss"]["stop_grad_p"] is True and few["eval"]["alpha"] is None
    assert few["data"]["probes_dir"] == "results/paper/probes"


def test_misspelled_keys_are_rejected_with_their_path():
    cfg = paper()
    cfg["groups"]["G1"]["seedz"] = cfg["groups"]["G1"].pop("seeds")
    with pytest.raises(ConfigError, match=r"groups\.G1.*seedz"):
        Grid(cfg)
    cfg = paper()
    cfg["defaults"]["train"]["epocs"] = 3
    with pytest.raises(ConfigError, match=r"defaults\.train.*epocs"):
        Grid(cfg)
    cfg = paper()
    cfg["groups"]["G1"]["backbones"].append("qwen3-7b")
    with pytest.raises(ConfigError, match=r"groups\.G1\.backbones: 'qwen3-7b'"):
        Grid(cfg)


def test_a_cell_feeding_several_tables_is_trained_once():
    grid = Grid(paper())
    cell = grid.cell("frog/qwen2.5-7b/dfil/lam0.5/nfull/qure/seed42")
    assert {"G4", "G5", "G8", "G12"} <= set(cell.groups)
    assert {"lambda_sweep", "compositional", "csmc_domains", "distill"} <= set(cell.tables)


def test_cell_outside_the_grid(tmp_path, capsys):
    grid = Grid(paper())
    with pytest.raises(ConfigError, match="not in the configured grid"):
        grid.cell("frog/qwen2.5-7b/dfil/lam0.3/nfull/qure/seed42")
    out = tmp_path / "cell.yaml"
    assert main(["grid", "cell", "--config", str(CONFIGS / "paper.yaml"), "--key",
                 "frog/qwen2.5-7b/corn/lamna/nfull/na/seed123", "--out", str(out)]) == 0
    cell = yaml.safe_load(out.read_text())
    assert cell["model"]["method"] == "corn" and cell["train"]["seed"] == 123
    assert main(["grid", "cell", "--config", str(CONFIGS / "paper.yaml"), "--key",
                 "frog/qwen2.5-7b/corn/lamna/nfull/na/seed7777", "--out", str(out)]) == 2
    assert "not in the configured grid" in capsys.readouterr().err


def test_group_cell_overrides_keep_keys_and_must_agree():
    cfg = {"name": "t", "backbones": {"b": {"size": "cpu"}},
           "resources": {"cpu": {"mem_mb": 1, "runtime": 1}}, "tasks": {"frog": {}},
           "groups": {"g": {"tasks": ["frog"], "backbones": ["b"], "methods": ["attn_pool"],
                            "lambdas": [0.5], "budgets": ["full"], "inits": ["qure"],
                            "seeds": [42], "cell": {"train": {"epochs": 2}}}}}
    grid = Grid(cfg)
    key = "frog/b/attn_pool/lam0.5/nfull/qure/seed42"
    assert grid.cells[key].config["train"]["epochs"] == 2
    cfg["groups"]["h"] = {**cfg["groups"]["g"], "cell": {"train": {"epochs": 3}}}
    with pytest.raises(ConfigError, match="different configuration"):
        Grid(cfg)
    cfg["groups"]["h"]["cell"] = {"train": {"epochz": 3}}
    with pytest.raises(ConfigError, match="epochz"):
        Grid(cfg)


@pytest.mark.parametrize("name", ["bad{name}", "x&y", "$HOME", "a\\b", "a b", ".hidden"])
def test_backbone_names_are_checked_like_grid_names(name):
    config = yaml.safe_load((CONFIGS / "smoke.yaml").read_text())
    config["backbones"][name] = config["backbones"].pop("tiny-llama")
    for group in config["groups"].values():
        group["backbones"] = [name if b == "tiny-llama" else b for b in group["backbones"]]
    with pytest.raises(ConfigError, match=r"config backbones: name .* may hold only letters"):
        Grid(config)


def test_feature_norm_with_lora_is_refused_with_the_cell_and_key():
    cfg = paper()
    cfg["defaults"].setdefault("model", {})["heads"] = {"feature_norm": "standardize"}
    with pytest.raises(ConfigError, match=r"cell frog/qwen2\.5-7b/dfil/.*model\.heads\."
                                          r"feature_norm: 'standardize'.*adapter: none"):
        Grid(cfg).cell("frog/qwen2.5-7b/dfil/lam0.1/nfull/qure/seed42")


def test_the_embedded_caption_names_its_heads_weight_decay():
    """The stand-in caption states the recipe's departures; this one is a number."""
    cfg = yaml.safe_load((CONFIGS / "config.yaml").read_text())
    decay = cfg["defaults"]["train"]["weight_decay_heads"]
    assert f"head weight decay {decay:g}" in " ".join(cfg["render"]["standin"].split())
