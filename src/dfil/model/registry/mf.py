"""The MF path's kinds (:attr:`MethodSpec.mf <dfil.core.methods.MethodSpec>`): what maps
the NumHead's p_hat ``[B]`` to class scores ``[B, Q]`` (Sec. 4.2, App. B.3), each built
as ``heads`` says. Its loss, lambda_DFIL CE(mu, y), and its reading, softmax of the scores
(note R-mf-probs), are the same for every kind."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from dfil.config.cell import HeadsConfig
from dfil.model.mf import OrderedGaussianMF, ProportionClassifier, UnorderedGaussianMF


def _gaussian(kind: type[nn.Module]) -> Callable[[int, HeadsConfig], nn.Module]:
    def build(num_classes: int, heads: HeadsConfig) -> nn.Module:
        return kind(num_classes, init=heads.mf_init, width_init=heads.width_init,
                    qure_inversion=heads.qure_inversion, uniform_mode=heads.uniform_mode)
    return build


#: Each MF kind's builder, ``(num_classes, heads) -> module [B] -> [B, Q]``.
MF_KINDS: dict[str, Callable[[int, HeadsConfig], nn.Module]] = {
    "ordered": _gaussian(OrderedGaussianMF),
    "unordered": _gaussian(UnorderedGaussianMF),
    "linear": lambda num_classes, heads: ProportionClassifier(num_classes),
}
