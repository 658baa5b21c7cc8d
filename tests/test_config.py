"""The cell's configuration (dfil.config.cell) and its validation (dfil.config.validation)."""

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from dfil.config.cell import (
    BackboneConfig,
    CellConfig,
    HeadsConfig,
    LoraConfig,
    ModelConfig,
    TrainConfig,
    config_hash,
    load_cell,
    to_dict,
)
from dfil.config.grid import Grid, load_grid_files
from dfil.config.validation import validate
from dfil.config.yamlfile import load_yaml
from dfil.util.errors import ConfigError

CONFIGS = Path(__file__).resolve().parents[1] / "config"


def test_validate_defaults_and_overrides():
    cfg = validate(ModelConfig, {"method": "coral", "lora": {"targets": ["q", "k", "v", "o"]}})
    assert cfg.method == "coral"
    assert cfg.lora.targets == ("q", "k", "v", "o")
    assert cfg.lora.r == 16 and cfg.loss.lambda_p == 0.5
    assert cfg.heads == HeadsConfig()
    assert validate(CellConfig, None) == CellConfig()


def test_configs_are_frozen():
    with pytest.raises(ValueError, match="frozen"):
        CellConfig().train.epochs = 3


def test_unknown_key_names_its_path_and_the_closest_known_key():
    with pytest.raises(ConfigError, match=r"^model\.heads\.clasifier: unknown key; did you "
                                          r"mean 'classifier'\? allowed keys are \["):
        validate(ModelConfig, {"heads": {"clasifier": "mlp"}}, "model")
    with pytest.raises(ConfigError, match=r"^zzz: unknown key; allowed keys are \['data', "
                                          r"'eval', 'model', 'name', 'train'\]$"):
        validate(CellConfig, {"zzz": 1})


def test_literal_value_outside_choices_names_path():
    with pytest.raises(ConfigError, match=r"^heads\.classifier: must be 'mlp' or 'linear', "
                                          r"got 'deep'$"):
        validate(ModelConfig, {"heads": {"classifier": "deep"}})
    with pytest.raises(ConfigError, match=r"^method: must be 'dfil', .* got 'dfill'$"):
        validate(ModelConfig, {"method": "dfill"})


def test_wrong_type_names_path():
    with pytest.raises(ConfigError, match=r"^lora\.r: expected an integer, got '16'$"):
        validate(ModelConfig, {"lora": {"r": "16"}})
    with pytest.raises(ConfigError, match=r"^lora\.r: expected an integer, got 16\.0$"):
        validate(ModelConfig, {"lora": {"r": 16.0}})
    with pytest.raises(ConfigError, match=r"^loss\.lambda_p: expected a number, got True$"):
        validate(ModelConfig, {"loss": {"lambda_p": True}})
    with pytest.raises(ConfigError, match=r"^lora\.targets\[1\]: must be 'q', 'k', 'v' or "
                                          r"'o', got 'x'$"):
        validate(ModelConfig, {"lora": {"targets": ["q", "x"]}})
    with pytest.raises(ConfigError, match=r"^heads: expected a mapping, got 3$"):
        validate(ModelConfig, {"heads": 3})
    with pytest.raises(ConfigError, match=r"^<root>: expected a mapping, got \[1\]$"):
        validate(ModelConfig, [1])


def test_mf_init_accepts_name_or_centers():
    assert validate(HeadsConfig, {"mf_init": "uniform"}).mf_init == "uniform"
    centers = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.98]
    assert validate(HeadsConfig, {"mf_init": centers}).mf_init == tuple(centers)
    with pytest.raises(ConfigError, match=r"^mf_init: must be 'qure' or 'uniform', got 'q'$"):
        validate(HeadsConfig, {"mf_init": "q"})
    with pytest.raises(ConfigError, match=r"^mf_init\[1\]: expected a number, got 'x'$"):
        validate(HeadsConfig, {"mf_init": [0.1, "x"]})


def test_dump_keeps_floats_floats_and_ints_ints():
    """The hash is of the JSON: an int given for a float field is stored as a float."""
    cfg = validate(CellConfig, {"train": {"lr_heads": 1, "epochs": 3, "betas": [0, 0.5]}})
    dumped = to_dict(cfg)["train"]
    assert dumped["lr_heads"] == 1.0 and isinstance(dumped["lr_heads"], float)
    assert dumped["epochs"] == 3 and isinstance(dumped["epochs"], int)
    assert dumped["betas"] == [0.0, 0.5] and all(isinstance(b, float) for b in dumped["betas"])
    assert config_hash(cfg) == config_hash(validate(CellConfig, {"train": {
        "lr_heads": 1.0, "epochs": 3, "betas": (0.0, 0.5)}}))


def test_round_trip_and_hash_stability():
    cfg = ModelConfig(backbone=BackboneConfig(arch={"model_type": "llama", "hidden_size": 8}))
    again = validate(ModelConfig, to_dict(cfg))
    assert again == cfg
    assert config_hash(again) == config_hash(cfg)
    assert config_hash(ModelConfig(method="finetune")) != config_hash(cfg)


#: Cells of the three shipped grids and their config hashes, as recorded in run
#: directories built before the configuration moved to pydantic: a change here retrains
#: every existing run. The paper grid's hashes hold its hub commits, which its lock file
#: holds once `dfil grid lock` has run where the hub is reachable (nobody here can): pin
#: them when that lock file is committed; none of its cells was ever trained.
PINNED = [
    ("smoke", "frog/tiny-llama/dfil+fewshot/lam0.5/n16/qure/seed42", "0676b87833f77fbd"),
    ("smoke", "ordinal_standin/tiny-llama/finetune/lamna/nfull/na/seed42", "adfb74d8e5429756"),
    ("config", "frog/smollm2-135m/attn_pool/lam0.5/nfull/qure/seed42", "9604aefa97fc3afc"),
    ("config", "frog/smollm2-135m/zero_shot/lamna/nfull/na/seedna", "f349ddede4053eb6"),
]


@pytest.mark.parametrize("grid,key,expected", PINNED)
def test_config_hashes_of_shipped_cells_are_pinned(grid, key, expected):
    cell = load_grid_files([CONFIGS / f"{grid}.yaml"]).cell(key)
    assert config_hash(validate(CellConfig, cell.config)) == expected
    assert json.loads(json.dumps(cell.config)) == cell.config  # plain JSON data


@pytest.mark.parametrize("section,key,value,message", [
    ("train", "epochs", 0, "train.epochs: must be >= 1, got 0"),
    ("train", "batch_size", 0, "train.batch_size: must be >= 1, got 0"),
    ("train", "eval_batch_size", -4, "train.eval_batch_size: must be >= 1, got -4"),
    ("train", "seed", -1, "train.seed: must be >= 0, got -1"),
    ("train", "lr_heads", 0, "train.lr_heads: must be > 0, got 0"),
    ("data", "max_length", 0, "data.max_length: must be >= 1, got 0"),
    ("data", "budget", 0, "data.budget: must be >= 1, got 0"),
    ("data", "train_frac", 1.0, "data.train_frac: must be < 1, got 1.0"),
    ("eval", "grid_sizes", [1000, 0], r"eval.grid_sizes\[1\]: must be >= 1, got 0"),
    ("eval", "alpha", 1.5, "eval.alpha: must be <= 1, got 1.5"),
])
def test_bounds_refuse_out_of_range_values_with_the_file_and_key(tmp_path, section, key,
                                                                  value, message):
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump({section: {key: value}}))
    with pytest.raises(ConfigError, match=rf"cell\.yaml: {message}"):
        load_cell(path)


def test_bounds_reach_nested_model_fields():
    with pytest.raises(ConfigError, match=r"^model\.lora\.r: must be >= 1, got 0$"):
        validate(CellConfig, {"model": {"lora": {"r": 0}}})
    with pytest.raises(ConfigError, match=r"^model\.num_classes: must be >= 2, got 1$"):
        validate(CellConfig, {"model": {"num_classes": 1}})
    with pytest.raises(ConfigError, match=r"^model\.loss\.lambda_dfil: must be >= 0"):
        validate(CellConfig, {"model": {"loss": {"lambda_dfil": -0.5}}})
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        LoraConfig(r=0)  # built in code: pydantic's own error
    assert CellConfig(train=TrainConfig(epochs=1)).train.epochs == 1


def test_grid_refuses_zero_epochs_with_the_key_path():
    config = load_yaml(CONFIGS / "smoke.yaml")
    config["defaults"]["train"]["epochs"] = 0
    with pytest.raises(ConfigError, match=r"^config defaults\.train\.epochs: must be >= 1, "
                                          r"got 0$"):
        Grid(config)


@pytest.mark.parametrize("model,message", [
    ({"num_classes": 5}, r"model\.heads\.mf_init: 'qure' initialises 8 centers, but "
                         r"model\.num_classes is 5"),
    ({"heads": {"mf_init": [0.1, 0.5, 0.9]}}, r"model\.heads\.mf_init: 3 centers for "
                                              r"model\.num_classes 8"),
    ({"num_classes": 3, "heads": {"mf_init": [0.1, 0.5, 0.5]}},
     r"model\.heads\.mf_init: centers must increase strictly"),
    ({"num_classes": 3, "heads": {"mf_init": [0.1, 0.5, 0.99]}},
     r"model\.heads\.mf_init\[2\]: must be <= 0\.98, got 0\.99"),
])
def test_an_mf_init_that_does_not_fit_its_classes_is_refused_with_its_key(tmp_path, model,
                                                                          message):
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump({"model": model}))
    with pytest.raises(ConfigError, match=rf"cell\.yaml: {message}"):
        load_cell(path)
    if "<=" not in message:  # a method without an MF ignores the init (not its bounds)
        path.write_text(yaml.safe_dump({"model": {**model, "method": "finetune"}}))
        assert load_cell(path).model.method == "finetune"


def test_gradient_checkpointing_is_not_part_of_the_hash():
    """It changes time and memory, not the numbers: the paper grid turns it on for its
    32B and 72B backbones, and the OOM retry for any, without retraining anything."""
    cell = load_grid_files([CONFIGS / "smoke.yaml"]).cell(PINNED[0][1]).config
    on = json.loads(json.dumps(cell))
    on["model"]["backbone"]["gradient_checkpointing"] = True
    assert validate(CellConfig, on).model.backbone.gradient_checkpointing
    assert config_hash(validate(CellConfig, on)) == PINNED[0][2]
    assert load_grid_files([CONFIGS / "paper.yaml"]).cell(
        "frog/qwen2.5-72b/dfil/lam0.1/nfull/qure/seed42").config["model"]["backbone"][
        "gradient_checkpointing"] is True


def test_a_control_input_changes_the_hash_only_where_a_cell_has_one():
    plain = ModelConfig(adapter="none")
    control = ModelConfig(adapter="none", heads={"control_input": "proportion"})
    tree = to_dict(plain)
    del tree["heads"]["control_input"]
    # "none" is hashed as if the field did not exist; "proportion" is a different config
    assert config_hash(plain) == hashlib.sha256(
        json.dumps(tree, sort_keys=True).encode()).hexdigest()[:16]
    assert config_hash(control) != config_hash(plain)
