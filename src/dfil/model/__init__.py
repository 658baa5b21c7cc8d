"""DFIL model: ordered MFs, heads, methods, losses and the LoRA dual-path model.

Imports torch, transformers and peft only; knows nothing of files or configs on disk.
The names below are loaded on first use (PEP 562), so that the pure method table
(:mod:`dfil.model.methods`, which the grid and the table renderer need) is importable
without loading torch.
"""

from importlib import import_module

from dfil.model.methods import METHODS as METHODS
from dfil.model.methods import MethodSpec as MethodSpec
from dfil.model.methods import method_spec as method_spec

_LAZY = {
    "dfil.model.backbone": ("apply_lora", "last_token_pool", "load_backbone", "load_tokenizer",
                            "lora_target_modules", "position_ids_from_mask"),
    "dfil.model.dual_path": ("DualPathHeads", "DualPathModel", "HeadOutputs", "build_heads",
                             "build_model", "compute_loss", "count_trainable",
                             "main_class_probs", "main_labels"),
    "dfil.model.heads": ("AttentionPool", "CoralHead", "CornHead", "NumericalHead",
                         "classifier_head"),
    "dfil.model.mf": ("OrderedGaussianMF", "ProportionClassifier", "UnorderedGaussianMF"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'dfil.model' has no attribute {name!r}")


__all__ = sorted(["METHODS", "MethodSpec", "method_spec", *_WHERE])
