"""One training cell's whole configuration (``CellConfig``), the contract of ``cell.yaml``:
its resolution, reading, writing and hash (pure Python).

A cell is one (task, backbone, method, lambda, budget, init, seed) point of the grid. Its
YAML is what ``dfil train --cell`` reads; defaults follow the paper's recipe (App. C.1;
docs/reproduction-notes.md where it is silent) and every value is overridable.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from dfil.config.cell.data import DataConfig
from dfil.config.cell.evaluation import EvalConfig
from dfil.config.cell.model import ModelConfig, check_feature_norm, check_mf_init, check_revision
from dfil.config.cell.train import TrainConfig
from dfil.config.validation import StrictModel, validate
from dfil.config.yamlfile import load_yaml
from dfil.util.errors import ConfigError


class CellConfig(StrictModel):
    """Everything one run needs; saved resolved as ``cell.yaml`` in its run directory."""

    name: str = "cell"
    model: ModelConfig = Field(default_factory=ModelConfig)
    data: DataConfig = Field(default_factory=DataConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)


def with_stop_grad_p(cell: CellConfig) -> CellConfig:
    """``cell`` with stop-gradient on p: few-shot budgets and collapse remediation
    (App. D.2)."""
    loss = cell.model.loss.model_copy(update={"stop_grad_p": True})
    return cell.model_copy(update={"model": cell.model.model_copy(update={"loss": loss})})


def configuration(cell: CellConfig) -> CellConfig:
    """``cell`` apart from its training seed (and the name that carries it): what the
    seeds of one configuration share."""
    train = cell.train.model_copy(update={"seed": 0})
    return cell.model_copy(update={"name": "", "train": train})


def resolve(cell: CellConfig) -> CellConfig:
    """Check the fields that depend on each other (each field's own type and bounds were
    checked when the cell was built), then apply the paper's implicit rule: stop-gradient
    on p for budgets <= ``train.stopgrad_max_budget``."""
    check_feature_norm(cell.model)
    check_mf_init(cell.model)
    check_revision(cell.model.backbone)
    budget = cell.data.budget
    if budget is not None and budget <= cell.train.stopgrad_max_budget:
        cell = with_stop_grad_p(cell)
    return cell


def cell_of(config: dict) -> CellConfig:
    """The resolved cell of a grid's resolved cell config (``Grid.cell(key).config``):
    what the DAG's ``cell_config`` job writes as ``cell.yaml`` (:func:`dump_cell`)."""
    return resolve(validate(CellConfig, config))


def load_cell(path: str | Path) -> CellConfig:
    """Read and resolve a cell YAML; :class:`ConfigError` names the file and the key."""
    path = Path(path)
    data = load_yaml(path)  # its errors name the file (and line) already
    if data is None:  # a cell file always holds its whole resolved config
        raise ConfigError(f"{path}: empty, no cell config; remake it (the cell_config rule, "
                          "or dfil grid cell) and rerun")
    try:
        return resolve(validate(CellConfig, data))
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def to_dict(config: BaseModel) -> dict:
    """The plain form of a config (tuples as lists): what ``cell.yaml`` holds."""
    return config.model_dump(mode="json")


def dump_cell(cell: CellConfig) -> str:
    """YAML text of a resolved cell (the ``cell.yaml`` of a run directory)."""
    return yaml.safe_dump(to_dict(cell), sort_keys=False)


def config_hash(config: BaseModel) -> str:
    """Short stable hash of a resolved config, recorded in every metrics file and resume
    state: sha256 of its sorted-key JSON (so 1 and 1.0 differ: fields keep their types).

    Gradient checkpointing is hashed as off whatever it is: it trades time for memory and
    leaves the numbers as they are (the OOM retry turns it on for the same run), so a
    grid turning it on for its largest backbones retrains nothing. A positive control's
    input is hashed only where a cell has one (``heads.control_input`` other than "none"),
    so every other cell keeps the hash it had before controls existed."""
    tree = to_dict(config)
    backbone = tree.get("model", tree).get("backbone")
    if isinstance(backbone, dict) and "gradient_checkpointing" in backbone:
        backbone["gradient_checkpointing"] = False
    heads = tree.get("model", tree).get("heads")
    if isinstance(heads, dict) and heads.get("control_input") == "none":
        del heads["control_input"]
    blob = json.dumps(tree, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
