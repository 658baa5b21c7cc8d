import pytest

from dfil.config import (
    BackboneConfig,
    ConfigError,
    HeadsConfig,
    ModelConfig,
    config_hash,
    from_dict,
    to_dict,
)


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
