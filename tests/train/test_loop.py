"""Optimizer groups of the training loop (App. C.1's three learning rates)."""

from __future__ import annotations

import pytest

from dfil.config.cell import CellConfig, HeadsConfig, TrainConfig
from dfil.model import build_model
from dfil.train.loop import param_groups
from tinymodel import tiny_config


def groups(weight_decay_heads, adapter="none"):
    config = tiny_config("dfil", adapter=adapter, heads=HeadsConfig())
    model = build_model(config, seed=0, backbone=adapter != "none")
    cell = CellConfig(model=config, train=TrainConfig(weight_decay=0.01,
                                                      weight_decay_heads=weight_decay_heads))
    return {g["name"]: g for g in param_groups(model, cell)}, model


@pytest.mark.parametrize("heads_decay, expected", [(None, 0.01), (0.3, 0.3)])
def test_heads_weight_decay_leaves_the_mf_group_alone(heads_decay, expected):
    by_name, model = groups(heads_decay)
    assert set(by_name) == {"heads", "mf"}  # frozen backbone: no LoRA group
    assert (by_name["heads"]["lr"], by_name["mf"]["lr"]) == (1e-3, 1e-2)
    assert by_name["heads"]["weight_decay"] == expected
    assert by_name["mf"]["weight_decay"] == 0.01
    mf = {id(p) for p in model.heads.mf.parameters()}
    assert {id(p) for p in by_name["mf"]["params"]} == mf
    assert not mf & {id(p) for p in by_name["heads"]["params"]}


def test_lora_keeps_the_weight_decay_of_every_group_but_the_heads():
    by_name, model = groups(0.3, adapter="lora")
    assert set(by_name) == {"lora", "heads", "mf"}
    assert by_name["lora"]["lr"] == 2e-5 and by_name["lora"]["weight_decay"] == 0.01
    assert by_name["heads"]["weight_decay"] == 0.3 and by_name["mf"]["weight_decay"] == 0.01
    lora = {n for n, p in model.named_parameters() if p.requires_grad and "lora_" in n}
    assert lora and len(by_name["lora"]["params"]) == len(lora)


def test_a_negative_heads_weight_decay_is_refused_with_its_key():
    from dfil.config.cell import resolve
    from dfil.config.validation import validate
    from dfil.util.errors import ConfigError

    with pytest.raises(ConfigError, match=r"train\.weight_decay_heads.*>= 0"):
        resolve(validate(CellConfig, {"train": {"weight_decay_heads": -0.1}}))
