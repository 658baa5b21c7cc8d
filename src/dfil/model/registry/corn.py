"""The CORN head (Shi et al. 2023): Q-1 conditional binary tasks, its loss (mean over the
(example, task) pairs in each task's conditional set) and its chained rank rule; terms as
coral-pytorch has them."""

from __future__ import annotations

import torch
from torch import nn

from dfil.config.cell import HeadsConfig
from dfil.model.heads import CornHead
from dfil.model.losses import corn_label, corn_loss, exceedance_to_class_probs
from dfil.model.registry.base import MainHead


class Corn(MainHead):
    """``[B, d] -> [B, Q-1]`` conditional logits; P(y > k) is their chained product."""

    name = "corn"

    def build(self, d: int, num_classes: int, heads: HeadsConfig) -> nn.Module:
        return CornHead(d, num_classes, heads.hidden, heads.ordinal_trunk)

    def loss(self, logits: torch.Tensor, y: torch.Tensor,
             class_weights: torch.Tensor | None) -> torch.Tensor:
        return corn_loss(logits, y, logits.shape[-1] + 1)

    def denominator(self, y: torch.Tensor, num_classes: int, count: torch.Tensor,
                    weighted: torch.Tensor) -> torch.Tensor:
        """Example i is in tasks 0..min(y_i, Q-2): min(y_i + 1, Q-1) pairs."""
        return (y.clamp(max=num_classes - 2) + 1).float().sum()

    def class_probs(self, logits: torch.Tensor) -> torch.Tensor:
        return exceedance_to_class_probs(torch.cumprod(torch.sigmoid(logits), dim=1))

    def rank_labels(self, logits: torch.Tensor) -> torch.Tensor:
        return corn_label(logits)
