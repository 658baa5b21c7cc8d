"""A training cell's configuration, validated by frozen, strict pydantic models (pure
Python): ``CellConfig`` and its sections, ``model`` (backbone, LoRA, heads, loss; what a
checkpoint needs to rebuild its model), ``data``, ``train`` and ``eval``.

YAML holds overrides only; every key has a default, none is unknown, and an error names
the file and the dotted key (:mod:`dfil.config.validation`).
"""

from dfil.config.cell.cell import (
    CellConfig,
    cell_of,
    config_hash,
    configuration,
    dump_cell,
    load_cell,
    resolve,
    to_dict,
    with_stop_grad_p,
)
from dfil.config.cell.data import DataConfig
from dfil.config.cell.evaluation import EvalConfig
from dfil.config.cell.model import (
    BackboneConfig,
    HeadsConfig,
    LoraConfig,
    LossConfig,
    MethodName,
    MfInitName,
    ModelConfig,
    check_feature_norm,
)
from dfil.config.cell.train import TrainConfig

__all__ = [
    "BackboneConfig",
    "CellConfig",
    "cell_of",
    "DataConfig",
    "EvalConfig",
    "HeadsConfig",
    "LoraConfig",
    "LossConfig",
    "MethodName",
    "MfInitName",
    "ModelConfig",
    "TrainConfig",
    "check_feature_norm",
    "config_hash",
    "configuration",
    "dump_cell",
    "load_cell",
    "resolve",
    "to_dict",
    "with_stop_grad_p",
]
