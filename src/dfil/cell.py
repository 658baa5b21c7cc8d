"""One training cell: the resolved configuration of a single run (pure Python).

A cell is one (task, backbone, method, lambda, budget, init, seed) point of the grid. Its
YAML is what ``dfil train --cell`` reads; defaults follow the paper's recipe (App. C.1,
inventory section 4) and every value is overridable.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Literal

import yaml

from dfil.config import (
    Bound,
    ConfigError,
    Count,
    ModelConfig,
    NonNegative,
    NonNegativeReal,
    Share,
    check_bounds,
    check_feature_norm,
    from_dict,
    to_dict,
)
from dfil.yamlfile import load_yaml


@dataclass(frozen=True)
class DataConfig:
    """Where the cell's data comes from and how it is cut (Sec. 5.1, App. C.3)."""

    task: Literal["frog", "sst5", "sts22", "ordinal_standin"] = "frog"
    #: FRoG: hub id, local file or directory (e.g. the synthetic stand-in's).
    source: str = "GAIR/FRoG"
    #: Test split source when it differs from ``source`` (SST-5/STS22 local files; FRoG
    #: when ``source`` is a single file).
    test_source: str = ""
    #: Test items that may also be in train/val (by id or text). 0: any overlap is refused;
    #: only for a benchmark whose own splits overlap (or a stand-in with repeated texts).
    allowed_test_overlap: NonNegative = 0
    frog_task: str = "mask_quant"
    train_frac: Annotated[float, Bound(exclusive_minimum=0, exclusive_maximum=1)] = 0.8
    split_seed: int = 0
    #: Few-shot training budget N; None trains on the full train split.
    budget: Count | None = None
    fewshot_min_per_class: NonNegative = 1
    #: Seed of the few-shot subsample; None draws a subset per training seed.
    fewshot_seed: int | None = None
    #: Cap on examples per split (0 = all), for smoke runs only.
    max_examples: NonNegative = 0
    max_length: Count = 256
    #: Keep the end of long prompts ("Answer:" is where the last-token state is read).
    truncation_side: Literal["left", "right"] = "left"
    probes_dir: str = ""
    qure_source: str = ""
    #: Rows QuRe's transfer set must have (the paper's 401 few/some/most/all sentences): a
    #: truncated file is refused, not scored on what is left.
    qure_rows: Count = 401
    #: ``paper``: App. C.2's multiple-choice prompt; ``compact``: the sentence and
    #: "Answer:" only, ~40% of the tokens, for CPU runs (note R-compact-prompt).
    prompt: Literal["paper", "compact"] = "paper"
    #: Say so in every output when the data is a synthetic stand-in.
    standin: bool = False


@dataclass(frozen=True)
class TrainConfig:
    """App. C.1 recipe: AdamW, three LR groups, warmup + cosine, clip 1.0, 20 epochs x 8."""

    epochs: Count = 20
    batch_size: Count = 8
    lr_lora: float = 2e-5
    lr_heads: float = 1e-3
    lr_mf: float = 1e-2
    betas: tuple[float, ...] = (0.9, 0.999)
    adam_eps: float = 1e-8
    weight_decay: NonNegativeReal = 1e-2
    #: AdamW weight decay of the heads' group alone (classifier, numerical head, ordinal
    #: and attention-pooling heads; not the MF parameters, not LoRA); null: weight_decay
    #: (note R-head-decay).
    weight_decay_heads: NonNegativeReal | None = None
    #: The warmup length is not given (note R-warmup).
    warmup_ratio: Share = 0.1
    grad_clip: Annotated[float, Bound(exclusive_minimum=0)] = 1.0
    seed: int = 42
    #: bf16 autocast on CUDA (the paper's H200 runs); CPU trains in fp32 unless "bf16".
    precision: Literal["auto", "fp32", "bf16"] = "auto"
    #: Collapse remediation (App. D.2): retrain with stop-gradient when the MF accuracy on
    #: validation ends below this; 0 disables it.
    collapse_threshold: float = 0.05
    #: Stop-gradient on p is on by default for budgets <= this (App. D.2).
    stopgrad_max_budget: NonNegative = 256
    eval_batch_size: Count = 32
    #: Batch layout, the same model up to float rounding either way (note R-batches):
    #: ``packed`` concatenates a batch's prompts (no padding; needs flash attention, whose
    #: varlen kernel takes the boundaries), ``padded`` pads them on the right; ``auto``
    #: packs where the backbone's attention can, pads otherwise. attn_pool always pads.
    batching: Literal["auto", "packed", "padded"] = "auto"
    #: Batches of similar prompt lengths (windows of 50 batches sorted by length, the
    #: batches then shuffled), so padded batches carry little padding; false keeps the
    #: plain seeded shuffle. Changes which prompts share a batch (note R-batches).
    group_by_length: bool = True
    #: Deterministic kernels (torch.use_deterministic_algorithms, CUBLAS_WORKSPACE_CONFIG),
    #: so a rerun or a resumed run ends with the same numbers on a GPU too; some kernels
    #: get slower (note R-deterministic).
    deterministic: bool = True


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation protocol knobs (Sec. 5, App. F)."""

    #: Ensemble weight of the main path; None selects it on validation (few-shot).
    alpha: Share | None = 0.5
    alpha_grid: tuple[Share, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    grid_sizes: tuple[Count, ...] = (1_000, 10_000, 100_000, 1_000_000)
    #: How a CSMC pair with equal predicted classes counts (note R-csmc-ties).
    csmc_ties: Literal["consistent", "violation"] = "consistent"
    probes: bool = True
    #: Evaluate every k-th item of each probe set (1 = all, the paper's sizes); for CPU
    #: runs only (note R-probe-stride).
    probe_stride: Count = 1
    qure: bool = True


@dataclass(frozen=True)
class CellConfig:
    """Everything one run needs; saved resolved as ``cell.yaml`` in its run directory."""

    name: str = "cell"
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)


def resolve(cell: CellConfig) -> CellConfig:
    """Check every field's bounds (:func:`dfil.config.check_bounds`) and the fields that
    depend on each other, then apply the paper's implicit rules: stop-gradient on p for
    budgets <= 256."""
    check_bounds(cell)
    check_feature_norm(cell.model)
    budget = cell.data.budget
    if budget is not None and budget <= cell.train.stopgrad_max_budget:
        cell = with_stop_grad_p(cell)
    return cell


def with_stop_grad_p(cell: CellConfig) -> CellConfig:
    """The cell with stop-gradient on p: small budgets (:func:`resolve`) and the retraining
    of a collapsed MF branch (App. D.2)."""
    loss = replace(cell.model.loss, stop_grad_p=True)
    return replace(cell, model=replace(cell.model, loss=loss))


def load_cell(path: str | Path) -> CellConfig:
    """Read and resolve a cell YAML; :class:`ConfigError` names the file and the key."""
    path = Path(path)
    data = load_yaml(path)
    try:
        return resolve(from_dict(CellConfig, data))
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def dump_cell(cell: CellConfig) -> str:
    """YAML text of a resolved cell (the ``cell.yaml`` of a run directory)."""
    return yaml.safe_dump(to_dict(cell), sort_keys=False)
