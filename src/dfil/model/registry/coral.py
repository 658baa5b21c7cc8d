"""The CORAL head (Cao et al. 2020): Q-1 rank logits with shared weights, its loss
(unweighted, mean over the batch) and its rank rule; terms as coral-pytorch has them."""

from __future__ import annotations

import torch
from torch import nn

from dfil.config.cell import HeadsConfig
from dfil.model.heads import CoralHead
from dfil.model.losses import coral_label, coral_levels, coral_loss, exceedance_to_class_probs
from dfil.model.registry.base import MainHead


class Coral(MainHead):
    """``[B, d] -> [B, Q-1]`` logits of P(y > k); labels count the thresholds passed."""

    name = "coral"

    def build(self, d: int, num_classes: int, heads: HeadsConfig) -> nn.Module:
        return CoralHead(d, num_classes, heads.hidden, heads.ordinal_trunk)

    def loss(self, logits: torch.Tensor, y: torch.Tensor,
             class_weights: torch.Tensor | None) -> torch.Tensor:
        return coral_loss(logits, coral_levels(y, logits.shape[-1] + 1))

    def class_probs(self, logits: torch.Tensor) -> torch.Tensor:
        return exceedance_to_class_probs(torch.sigmoid(logits))

    def rank_labels(self, logits: torch.Tensor) -> torch.Tensor:
        return coral_label(logits)
