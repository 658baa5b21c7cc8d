"""A cell's training recipe (pure Python): App. C.1's optimiser, schedule and seeds."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from dfil.config.validation import (
    Count,
    NonNegative,
    NonNegativeReal,
    PositiveReal,
    Share,
    StrictModel,
    TupleOf,
)


class TrainConfig(StrictModel):
    """App. C.1 recipe: AdamW, three LR groups, warmup + cosine, clip 1.0, 20 epochs x 8."""

    epochs: Count = 20
    batch_size: Count = 8
    lr_lora: PositiveReal = 2e-5
    lr_heads: PositiveReal = 1e-3
    lr_mf: PositiveReal = 1e-2
    betas: TupleOf[Annotated[float, Field(ge=0, lt=1)]] = (0.9, 0.999)
    adam_eps: PositiveReal = 1e-8
    weight_decay: NonNegativeReal = 1e-2
    weight_decay_heads: NonNegativeReal | None = None
    """AdamW weight decay of the heads' group alone (classifier, numerical head, ordinal
    and attention-pooling heads; not the MF parameters, not LoRA); null: weight_decay
    (note R-head-decay)."""
    warmup_ratio: Share = 0.1
    """The warmup length is not given (note R-warmup)."""
    grad_clip: PositiveReal = 1.0
    seed: NonNegative = 42
    precision: Literal["auto", "fp32", "bf16"] = "auto"
    """bf16 autocast on CUDA (the paper's H200 runs); CPU trains in fp32 unless "bf16"."""
    collapse_threshold: NonNegativeReal = 0.05
    """Collapse remediation (App. D.2): retrain with stop-gradient when the MF accuracy on
    validation ends below this; 0 disables it (above 1: always, as tests force it)."""
    stopgrad_max_budget: NonNegative = 256
    """Stop-gradient on p is on by default for budgets <= this (App. D.2)."""
    eval_batch_size: Count = 32
    batching: Literal["auto", "packed", "padded"] = "auto"
    """Batch layout, the same model up to float rounding either way (note R-batches):
    ``packed`` concatenates a batch's prompts (no padding; needs flash attention, whose
    varlen kernel takes the boundaries), ``padded`` pads them on the right; ``auto``
    packs where the backbone's attention can, pads otherwise. attn_pool always pads."""
    group_by_length: bool = True
    """Batches of similar prompt lengths (windows of 50 batches sorted by length, the
    batches then shuffled), so padded batches carry little padding; false keeps the
    plain seeded shuffle. Changes which prompts share a batch (note R-batches)."""
    deterministic: bool = True
    """Deterministic kernels (torch.use_deterministic_algorithms, CUBLAS_WORKSPACE_CONFIG),
    so a rerun or a resumed run ends with the same numbers on a GPU too; some kernels
    get slower (note R-deterministic)."""
