"""DFIL model: ordered MFs, heads, losses, the backbone with LoRA and the dual-path model.

Its modules import torch at module level (transformers and peft inside the functions that
load a backbone); knows nothing of files or configs on disk beyond the embedded backbone's
cache (:mod:`dfil.model.embedded`, which imports no torch: the names below load their
module when first used). The method table is :mod:`dfil.core.methods`, which is pure.
"""

from importlib import import_module

#: Each public name, and the module that defines it.
_HOME = {
    "last_token_pool": "backbone", "load_backbone": "backbone", "load_tokenizer": "backbone",
    "position_ids_from_mask": "backbone",
    "DualPathHeads": "dual_path", "DualPathModel": "dual_path", "HeadOutputs": "dual_path",
    "build_heads": "dual_path", "build_model": "dual_path", "count_trainable": "dual_path",
    "AttentionPool": "heads", "CoralHead": "heads", "CornHead": "heads",
    "NumericalHead": "heads", "classifier_head": "heads",
    "apply_lora": "lora", "lora_target_modules": "lora",
    "OrderedGaussianMF": "mf", "ProportionClassifier": "mf", "UnorderedGaussianMF": "mf",
    "compute_loss": "objective", "main_class_probs": "objective", "main_labels": "objective",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'dfil.model' has no attribute {name!r}")
    return getattr(import_module(f"dfil.model.{_HOME[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
