from pathlib import Path

import pytest
import yaml

from dfil.cell import CellConfig, load_cell
from dfil.config import (
    BackboneConfig,
    Bound,
    ConfigError,
    HeadsConfig,
    LoraConfig,
    ModelConfig,
    check_bounds,
    config_hash,
    from_dict,
    to_dict,
)
from dfil.grid import Grid
from dfil.yamlfile import load_yaml


def test_from_dict_defaults_and_overrides():
    cfg = from_dict(ModelConfig, {"method": "coral", "lora": {"targets": ["q", "k", "v", "o"]}})
    assert cfg.method == "coral"
    assert cfg.lora.targets == ("q", "k", "v", "o")
    assert cfg.lora.r == 16 and cfg.loss.lambda_p == 0.5
    assert cfg.heads == HeadsConfig()


def test_unknown_key_names_its_path():
    with pytest.raises(ConfigError, match=r"model\.heads\.clasifier: unknown key"):
        from_dict(ModelConfig, {"heads": {"clasifier": "mlp"}}, "model")


def test_literal_value_outside_choices_names_path():
    with pytest.raises(ConfigError, match=r"heads\.classifier: 'deep' is not one of"):
        from_dict(ModelConfig, {"heads": {"classifier": "deep"}})


def test_wrong_type_names_path():
    with pytest.raises(ConfigError, match=r"lora\.r: expected int"):
        from_dict(ModelConfig, {"lora": {"r": "16"}})
    with pytest.raises(ConfigError, match=r"loss\.lambda_p: expected a number"):
        from_dict(ModelConfig, {"loss": {"lambda_p": True}})
    with pytest.raises(ConfigError, match=r"lora\.targets\[1\]"):
        from_dict(ModelConfig, {"lora": {"targets": ["q", "x"]}})


def test_mf_init_accepts_name_or_centers():
    assert from_dict(HeadsConfig, {"mf_init": "uniform"}).mf_init == "uniform"
    centers = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.98]
    assert from_dict(HeadsConfig, {"mf_init": centers}).mf_init == tuple(centers)


def test_round_trip_and_hash_stability():
    cfg = ModelConfig(backbone=BackboneConfig(arch={"model_type": "llama", "hidden_size": 8}))
    again = from_dict(ModelConfig, to_dict(cfg))
    assert again == cfg
    assert config_hash(again) == config_hash(cfg)
    assert config_hash(ModelConfig(method="finetune")) != config_hash(cfg)


def test_bound_violation_hand_computed():
    assert Bound(minimum=1).violation(1) is None
    assert Bound(minimum=1).violation(0) == "must be >= 1, got 0"
    assert Bound(exclusive_minimum=0, exclusive_maximum=1).violation(1.0) == "must be < 1, got 1.0"
    assert Bound(exclusive_minimum=0).violation(0.0) == "must be > 0, got 0.0"
    assert Bound(minimum=0, maximum=1).violation(1.5) == "must be <= 1, got 1.5"
    assert Bound(minimum=0, exclusive_maximum=1).schema() == {"minimum": 0,
                                                               "exclusiveMaximum": 1}


@pytest.mark.parametrize("section,key,value,message", [
    ("train", "epochs", 0, "train.epochs: must be >= 1, got 0"),
    ("train", "batch_size", 0, "train.batch_size: must be >= 1, got 0"),
    ("train", "eval_batch_size", -4, "train.eval_batch_size: must be >= 1, got -4"),
    ("data", "max_length", 0, "data.max_length: must be >= 1, got 0"),
    ("data", "budget", 0, "data.budget: must be >= 1, got 0"),
    ("data", "train_frac", 1.0, "data.train_frac: must be < 1, got 1.0"),
    ("eval", "grid_sizes", [1000, 0], r"eval.grid_sizes\[1\]: must be >= 1, got 0"),
])
def test_check_bounds_refuses_non_positive_counts_with_the_key_path(tmp_path, section, key,
                                                                     value, message):
    path = tmp_path / "cell.yaml"
    path.write_text(yaml.safe_dump({section: {key: value}}))
    with pytest.raises(ConfigError, match=rf"cell\.yaml: {message}"):
        load_cell(path)


def test_check_bounds_reaches_nested_model_fields():
    with pytest.raises(ConfigError, match=r"model\.lora\.r: must be >= 1, got 0"):
        check_bounds(CellConfig(model=ModelConfig(lora=LoraConfig(r=0))))
    with pytest.raises(ConfigError, match=r"model\.num_classes: must be >= 2, got 1"):
        check_bounds(CellConfig(model=ModelConfig(num_classes=1)))
    check_bounds(CellConfig())  # the defaults are within their bounds


def test_grid_refuses_zero_epochs_with_the_key_path():
    config = load_yaml(Path(__file__).resolve().parents[1] / "config" / "smoke.yaml")
    config["defaults"]["train"]["epochs"] = 0
    with pytest.raises(ConfigError, match=r"config defaults\.train\.epochs: 0 is less than "
                                          r"the minimum of 1"):
        Grid(config)
