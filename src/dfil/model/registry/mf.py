"""What an MF path kind is (:attr:`MethodSpec.mf <dfil.core.methods.MethodSpec>`): the
module that maps the NumHead's p_hat ``[B]`` to class scores ``[B, Q]`` (Sec. 4.2,
App. B.3), its term of Eq. (loss), and its centers. The kinds the paper uses are defined
here: the ordered Gaussian MFs (DFIL), the unordered ones (the ablation) and no MF at all
(p_hat -> Linear(1, Q) logits)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from dfil.config.cell import HeadsConfig
from dfil.model.mf import OrderedGaussianMF, ProportionClassifier, UnorderedGaussianMF


class MFKind:
    """One kind of MF path over p_hat ``[B]``.

    name : the key of :data:`dfil.model.registry.MF_KINDS`, as :attr:`MethodSpec.mf` gives it.
    Its term is lambda_DFIL CE_w(mu, y) for every kind the paper uses, its scores read by
    softmax (note R-mf-probs); a kind with another loss overrides :meth:`loss`.
    """

    name: str = ""

    def build(self, num_classes: int, heads: HeadsConfig) -> nn.Module:
        """The path's module, ``p [B] -> scores [B, Q]``, initialised as ``heads`` says."""
        raise NotImplementedError(f"MF kind {self.name!r} defines no module")

    def loss(self, scores: torch.Tensor, y: torch.Tensor,
             class_weights: torch.Tensor | None) -> torch.Tensor:
        """CE_w(mu, y) of Eq. (loss) for float32 ``scores [B, Q]`` and labels ``y [B]``
        (``class_weights [Q]``, or None for a plain mean), before lambda_DFIL."""
        return F.cross_entropy(scores, y, weight=class_weights)

    def centers(self, module: nn.Module) -> torch.Tensor | None:
        """The path's ``[Q]`` MF centers (nearest-center inference, composition), or None
        where its scores are read by argmax alone."""
        return None

    def widths(self, module: nn.Module) -> torch.Tensor | None:
        """The path's ``[Q]`` Gaussian widths sigma, or None. The evaluation's grid check
        reads them as such (the Gaussian argmax's violations): a kind whose memberships
        are not Gaussian returns None."""
        return None


class Gaussian(MFKind):
    """Q Gaussian MFs over p_hat, ordered (centers by cumulative softmax) or not."""

    def __init__(self, name: str, module: type[nn.Module]):
        self.name, self.module = name, module

    def build(self, num_classes: int, heads: HeadsConfig) -> nn.Module:
        return self.module(num_classes, init=heads.mf_init, width_init=heads.width_init,
                           qure_inversion=heads.qure_inversion,
                           uniform_mode=heads.uniform_mode)

    def centers(self, module: nn.Module) -> torch.Tensor:
        return module.centers()

    def widths(self, module: nn.Module) -> torch.Tensor:
        return module.widths()


class Linear(MFKind):
    """No MF: p_hat -> Linear(1, Q) logits (the no-MF ablation)."""

    name = "linear"

    def build(self, num_classes: int, heads: HeadsConfig) -> nn.Module:
        return ProportionClassifier(num_classes)


#: The MF path kinds the paper uses, by :attr:`MethodSpec.mf` name.
PAPER_MF_KINDS = (Gaussian("ordered", OrderedGaussianMF),
                  Gaussian("unordered", UnorderedGaussianMF), Linear())
