import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from dfil.cli import main
from dfil.config.cell import CellConfig
from dfil.config.grid import Grid, load_grid_files
from dfil.config.gridfile import grid_schema
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "config"


def paper() -> dict:
    return yaml.safe_load((CONFIGS / "paper.yaml").read_text())


def smoke() -> dict:
    return yaml.safe_load((CONFIGS / "smoke.yaml").read_text())


def test_committed_schema_is_current():
    """config/schema.json is generated from the models (``dfil grid schema > ...``)."""
    assert json.loads((CONFIGS / "schema.json").read_text()) == grid_schema()


def test_schema_takes_backbone_values_from_the_cell_config():
    defs = grid_schema()["$defs"]
    for key in ("dtype", "attn_implementation", "quantized", "arch"):
        assert defs["GridBackbone"]["properties"][key] == defs["BackboneConfig"]["properties"][key]
    assert set(defs["GridBackbone"]["properties"]) == (
        set(defs["BackboneConfig"]["properties"]) - {"name"} | {"size", "label"})
    assert grid_schema()["properties"]["defaults"]["$ref"] == "#/$defs/CellConfig"
    assert defs["CellConfig"]["properties"].keys() == CellConfig.model_fields.keys()


@pytest.mark.parametrize("name", ["paper", "config", "smoke"])
def test_shipped_configs_validate(name):
    grid = load_grid_files([CONFIGS / f"{name}.yaml"])
    assert grid.cells
    # the committed schema says the same as the models, for editors and other tools
    jsonschema.validate(yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()), grid_schema())


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


def _edited(edit) -> dict:
    cfg = smoke()
    edit(cfg)
    return cfg


@pytest.mark.parametrize("edit,message", [
    # values that trained or failed late are refused at DAG build, by key
    (lambda c: c["groups"]["all_methods"].update(lambdas=[-0.5]),
     r"groups\.all_methods\.lambdas\[0\]: must be >= 0, got -0\.5"),
    (lambda c: c["groups"]["all_methods"].update(seeds=[-1]),
     r"groups\.all_methods\.seeds\[0\]: must be >= 0, got -1"),
    (lambda c: c["groups"]["all_methods"].update(seeds=[42.0]),
     r"groups\.all_methods\.seeds\[0\]: expected an integer, got 42\.0"),
    (lambda c: c["seed_sets"].update(one=[42.0]),
     r"seed_sets\.one\[0\]: expected an integer, got 42\.0"),
    (lambda c: c["seed_sets"].update(one=[]), r"seed_sets\.one: must list at least 1"),
    (lambda c: c["groups"]["fewshot"].update(budgets=[0]),
     r"groups\.fewshot\.budgets\[0\]: must be >= 1, got 0"),
    (lambda c: c["groups"]["fewshot"].update(budgets=["ful"]),
     r"groups\.fewshot\.budgets\[0\]: must be 'full', got 'ful'"),
    (lambda c: c["groups"]["fewshot"].update(methods=["dfill"]),
     r"groups\.fewshot\.methods\[0\]: must be 'dfil', .*got 'dfill'"),
    (lambda c: c["groups"]["fewshot"].pop("seeds"),
     r"groups\.fewshot\.seeds: required but missing"),
    (lambda c: c["embedded_data"]["frog"].pop("n_easy"),
     r"embedded_data\.frog\.n_easy: required but missing"),
    (lambda c: c["embedded_data"]["frog"].update(n_hard=0),
     r"embedded_data\.frog\.n_hard: must be >= 1, got 0"),
    (lambda c: c["resources"].pop("cpu"), r"resources: no class 'cpu'; the rules run light jobs"),
    (lambda c: c["resources"].pop("tiny"),
     r"backbones\.tiny-llama\.size: 'tiny' is not a class of resources \(\['cpu'\]\)"),
    (lambda c: c["resources"]["cpu"].pop("mem_mb"),
     r"resources\.cpu\.mem_mb: required but missing"),
    (lambda c: c["backbones"]["tiny-llama"].update(dtype="fp8"),
     r"backbones\.tiny-llama\.dtype: must be 'float32', 'bfloat16' or 'float16', got 'fp8'"),
    (lambda c: c["backbones"]["tiny-llama"].update(name="x"),
     r"backbones\.tiny-llama\.name: unknown key; allowed keys are"),
    (lambda c: c["groups"]["fewshot"].update(seeds="two"),
     r"groups\.fewshot\.seeds: unknown seed set 'two' \(\['control', 'one'\]\)"),
    (lambda c: c["groups"]["fewshot"].update(variant="fewshoot"),
     r"groups\.fewshot\.variant: unknown variant 'fewshoot' "
     r"\(\['control', 'control_alone', 'fewshot', 'frozen'\]\)"),
    # partial cells: any subset of keys, each checked where it is written
    (lambda c: c["groups"]["fewshot"].update(cell={"train": {"epochs": 0}}),
     r"groups\.fewshot\.cell\.train\.epochs: must be >= 1, got 0"),
    (lambda c: c["groups"]["fewshot"].update(cell={"train": {"epocs": 2}}),
     r"groups\.fewshot\.cell\.train\.epocs: unknown key; did you mean 'epochs'\?"),
    (lambda c: c["tasks"]["frog"]["cell"]["data"].update(task="frogs"),
     r"tasks\.frog\.cell\.data\.task: must be 'frog', .*got 'frogs'"),
    (lambda c: c["variants"]["fewshot"]["cell"]["eval"].update(alpha="none"),
     r"variants\.fewshot\.cell\.eval\.alpha: expected a number, got 'none'"),
    (lambda c: c["defaults"]["model"]["lora"].update(targets=["q", "z"]),
     r"defaults\.model\.lora\.targets\[1\]: must be 'q', 'k', 'v' or 'o', got 'z'"),
    (lambda c: c["render"].update(lambdas={"0.1": "half"}),
     r"render\.lambdas\.0\.1: expected a number, got 'half'"),
])
def test_out_of_range_and_misplaced_grid_values_name_file_and_key(tmp_path, edit, message):
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(_edited(edit), sort_keys=False))
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: config {message}"):
        load_grid_files([path])


def test_a_partial_cell_may_give_any_subset_of_keys():
    cfg = _edited(lambda c: c["groups"]["fewshot"].update(
        cell={"model": {"heads": {"width_init": 1}}, "eval": {}}))
    cell = Grid(cfg).cell("frog/tiny-llama/dfil+fewshot/lam0.5/n16/qure/seed42").config
    assert cell["model"]["heads"]["width_init"] == 1.0  # the float field's type, not the int
    assert cell["model"]["lora"]["r"] == 4 and cell["eval"]["alpha"] is None


def test_a_grid_with_no_cells_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(_edited(lambda c: c.update(groups={})), sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_grid_files([path])
    assert str(err.value) == (f"{path}: config groups: none declared, so the grid has no cells "
                              "and every table would be published empty; declare at least "
                              "one group")


@pytest.mark.parametrize("edit,key", [
    (lambda c: c["seed_sets"].update(three=[42, 42, 123]), "seed_sets.three"),
    (lambda c: c["groups"]["all_methods"].update(seeds=[7, 42, 7]), "groups.all_methods.seeds"),
])
def test_duplicate_seeds_are_refused_naming_the_set_and_file(tmp_path, edit, key):
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(_edited(edit), sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_grid_files([path])
    seed = 42 if key.startswith("seed_sets") else 7
    assert str(err.value).startswith(f"{path}: config {key}: seed {seed} is listed twice; ")


def test_a_config_error_is_blamed_on_the_command_line_override_that_set_it():
    from dfil.config.grid import blame, overridden

    files = {"name": "smoke", "probe_seed": 1, "defaults": {"train": {"epochs": 1, "lr": 0.1}}}
    config = {"name": "smoke", "probe_seed": 1, "epochs": -1,
              "defaults": {"train": {"epochs": 2, "lr": 0.1}}}
    assert overridden(config, files) == ["epochs", "defaults.train.epochs"]
    paths = ["config/smoke.yaml"]
    assert blame("config epochs: unknown key", config, files, paths) == "--config epochs"
    assert blame("config defaults.train.epochs: must be positive", config, files,
                 paths) == "--config defaults.train.epochs"
    assert blame("config defaults: bad", config, files, paths) == \
        "--config defaults.train.epochs"
    assert blame("config probe_seed: bad", config, files, paths) == \
        "config/smoke.yaml (with --config epochs, defaults.train.epochs)"
    assert blame("config probe_seed: bad", files, files, paths) == "config/smoke.yaml"
