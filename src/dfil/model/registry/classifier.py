"""The standard classifier head: class logits, weighted cross-entropy, softmax (Sec. 4.1)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from dfil.config.cell import HeadsConfig
from dfil.model.heads import classifier_head
from dfil.model.registry.base import MainHead, raw_columns


class Classifier(MainHead):
    """``[B, d] -> [B, Q]`` logits (``heads.classifier``: MLP or linear); CE_w of Eq. (loss)
    with the class weights; softmax probabilities, argmax labels."""

    name = "classifier"
    weighted = True

    def build(self, d: int, num_classes: int, heads: HeadsConfig) -> nn.Module:
        return classifier_head(d, num_classes, heads.classifier, heads.hidden,
                               raw_columns(heads))

    def loss(self, logits: torch.Tensor, y: torch.Tensor,
             class_weights: torch.Tensor | None) -> torch.Tensor:
        return F.cross_entropy(logits, y, weight=class_weights)

    def class_probs(self, logits: torch.Tensor) -> torch.Tensor:
        return torch.softmax(logits, dim=-1)
