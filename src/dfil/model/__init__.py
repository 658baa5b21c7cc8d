"""DFIL model: ordered MFs, heads, losses, the backbone with LoRA and the dual-path model.

Imports torch at module level (transformers and peft inside the functions that load a
backbone); knows nothing of files or configs on disk beyond the embedded backbone's cache
(:mod:`dfil.model.embedded`). The method table is :mod:`dfil.core.methods`, which is pure.
"""

from dfil.model.backbone import (
    last_token_pool,
    load_backbone,
    load_tokenizer,
    position_ids_from_mask,
)
from dfil.model.dual_path import (
    DualPathHeads,
    DualPathModel,
    HeadOutputs,
    build_heads,
    build_model,
    count_trainable,
)
from dfil.model.heads import AttentionPool, CoralHead, CornHead, NumericalHead, classifier_head
from dfil.model.lora import apply_lora, lora_target_modules
from dfil.model.mf import OrderedGaussianMF, ProportionClassifier, UnorderedGaussianMF
from dfil.model.objective import compute_loss, main_class_probs, main_labels

__all__ = [
    "AttentionPool", "CoralHead", "CornHead", "DualPathHeads", "DualPathModel", "HeadOutputs",
    "NumericalHead", "OrderedGaussianMF", "ProportionClassifier", "UnorderedGaussianMF",
    "apply_lora", "build_heads", "build_model", "classifier_head", "compute_loss",
    "count_trainable", "last_token_pool", "load_backbone", "load_tokenizer",
    "lora_target_modules", "main_class_probs", "main_labels", "position_ids_from_mask",
]
