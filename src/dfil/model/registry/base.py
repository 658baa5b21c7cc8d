"""What a main-path head is: its module, its loss, and how its outputs are read (Sec. 4.1).

A head kind is one subclass of :class:`MainHead`, registered by name in
:mod:`dfil.model.registry`; a method names its kind in :attr:`MethodSpec.main
<dfil.core.methods.MethodSpec>`. The dual-path model, the objective and prediction ask the
kind, never the method's name.
"""

from __future__ import annotations

import torch
from torch import nn

from dfil.config.cell import HeadsConfig


def raw_columns(heads: HeadsConfig) -> int:
    """How many last input columns skip an MLP head's LayerNorm: a positive control's
    appended proportion (``heads.control_input``), which the norm would divide by each
    item's spread over all features (:class:`dfil.model.heads.MLPHead`)."""
    return int(heads.control_input != "none")


class MainHead:
    """One kind of main-path head over the pooled state ``h [B, d]``.

    name : the key of :data:`dfil.model.registry.HEADS`, as :attr:`MethodSpec.main` gives it.
    weighted : whether :meth:`loss` applies the class weights (its batch sum is then
        divided by the labels' summed weights, :meth:`denominator`).
    """

    name: str = ""
    weighted: bool = False

    def build(self, d: int, num_classes: int, heads: HeadsConfig) -> nn.Module:
        """The head's module, ``[B, d] -> [B, K]`` logits (K is the kind's own)."""
        raise NotImplementedError(f"head {self.name!r} defines no module")

    def loss(self, logits: torch.Tensor, y: torch.Tensor,
             class_weights: torch.Tensor | None) -> torch.Tensor:
        """The main term of Eq. (loss) for float32 ``logits [B, K]`` and labels ``y [B]``,
        a mean over what :meth:`denominator` counts."""
        raise NotImplementedError(f"head {self.name!r} defines no loss")

    def denominator(self, y: torch.Tensor, num_classes: int, count: torch.Tensor,
                    weighted: torch.Tensor) -> torch.Tensor:
        """What :meth:`loss` divides its batch sum by, from the labels ``y [B]`` alone:
        ``weighted`` (the labels' summed class weights, or B) for a weighted loss,
        ``count`` (B) for a plain mean; a head with another mean says so here."""
        return weighted if self.weighted else count

    def class_probs(self, logits: torch.Tensor) -> torch.Tensor:
        """Class probabilities ``[B, Q]`` from float32 ``logits [B, K]``."""
        raise NotImplementedError(f"head {self.name!r} defines no class probabilities")

    def rank_labels(self, logits: torch.Tensor) -> torch.Tensor | None:
        """Labels ``[B]`` by the head's own rule, or None where the label is the argmax
        of :meth:`class_probs` (the default)."""
        return None
