"""DFIL model: ordered MFs, heads, methods, losses and the LoRA dual-path model.

Imports torch, transformers and peft only; knows nothing of files or configs on disk.
"""

from dfil.model.backbone import (
    apply_lora,
    last_token_pool,
    load_backbone,
    load_tokenizer,
    lora_target_modules,
    position_ids_from_mask,
)
from dfil.model.dual_path import (
    DualPathHeads,
    DualPathModel,
    HeadOutputs,
    build_heads,
    build_model,
    compute_loss,
    count_trainable,
    main_class_probs,
    main_labels,
)
from dfil.model.heads import AttentionPool, CoralHead, CornHead, NumericalHead, classifier_head
from dfil.model.methods import METHODS, MethodSpec, method_spec
from dfil.model.mf import OrderedGaussianMF, ProportionClassifier, UnorderedGaussianMF

__all__ = [
    "METHODS",
    "AttentionPool",
    "CoralHead",
    "CornHead",
    "DualPathHeads",
    "DualPathModel",
    "HeadOutputs",
    "MethodSpec",
    "NumericalHead",
    "OrderedGaussianMF",
    "ProportionClassifier",
    "UnorderedGaussianMF",
    "apply_lora",
    "build_heads",
    "build_model",
    "classifier_head",
    "compute_loss",
    "count_trainable",
    "last_token_pool",
    "load_backbone",
    "load_tokenizer",
    "lora_target_modules",
    "main_class_probs",
    "main_labels",
    "method_spec",
    "position_ids_from_mask",
]
