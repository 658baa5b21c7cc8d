"""The training objective and the reading of the heads' outputs: Eq. (loss) with the
methods' variations, and main-path class probabilities and labels. The main path's term,
probabilities and labels are its head kind's (:mod:`dfil.model.registry`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from dfil.config.cell import LossConfig
from dfil.core.methods import MethodSpec
from dfil.model.dual_path import HeadOutputs
from dfil.model.losses import LossTerms, distillation_loss
from dfil.model.registry import main_head, mf_kind


def effective_lambda_dfil(spec: MethodSpec, loss: LossConfig) -> float:
    return loss.lambda_dfil if spec.lambda_dfil is None else spec.lambda_dfil


def compute_loss(out: HeadOutputs, y: torch.Tensor, p_target: torch.Tensor | None,
                 spec: MethodSpec, loss: LossConfig,
                 class_weights: torch.Tensor | None = None) -> LossTerms:
    """Eq. (loss) for one batch, plus the method's variations.

    L = CE_w(y_hat, y) + lambda_DFIL CE_w(mu, y) + lambda_p mean (p_hat - p)^2
        [+ lambda_distill tau^2 KL(softmax(y_hat/tau) || softmax(mu/tau))].
    The main term is the head kind's loss (CORAL/CORN replace the CE with their own,
    unweighted), the MF term its MF kind's. ``y [B]`` int labels, ``p_target [B]``
    proportions, ``class_weights [Q]`` or None.
    """
    zero = torch.zeros((), device=y.device)
    main = mf = p_term = distill = zero
    kind = main_head(spec.main)
    if kind is not None:
        main = kind.loss(out.main_logits.float(), y, class_weights)
    lam = effective_lambda_dfil(spec, loss)
    if out.mf_scores is not None and lam > 0:
        weight = class_weights if loss.weight_mf_ce else None
        mf = lam * mf_kind(spec.mf).loss(out.mf_scores.float(), y, weight)
    if out.p is not None and loss.lambda_p > 0:
        if p_target is None:
            raise ValueError(f"method {spec.name!r} needs proportion targets p for lambda_p")
        p_term = loss.lambda_p * F.mse_loss(out.p.float(), p_target.float())
    if spec.distill:
        distill = loss.distill_lambda * distillation_loss(
            out.main_logits.float(), out.mf_scores.float(), loss.distill_tau,
            loss.distill_detach_teacher,
        )
    return LossTerms(total=main + mf + p_term + distill, main=main, mf=mf, p=p_term,
                     distill=distill)


def loss_denominators(y: torch.Tensor, spec: MethodSpec, loss: LossConfig, num_classes: int,
                      class_weights: torch.Tensor | None = None) -> LossTerms:
    """What each term of :func:`compute_loss` divides its batch sum by, from the labels
    ``y [B]`` alone (float device scalars): B for a plain mean, the labels' summed class
    weights for a weighted cross-entropy, the head kind's own for the main term (CORN's
    count of (example, task) pairs). Each is a sum over examples, so a batch's is the sum
    of its parts': gradient accumulation
    rescales each part's term by part / whole (:func:`dfil.train.step.train_step`)."""
    count = torch.full((), float(y.numel()), device=y.device)
    weighted = count if class_weights is None else class_weights[y].float().sum()
    kind = main_head(spec.main)
    main = count if kind is None else kind.denominator(y, num_classes, count, weighted)
    mf = weighted if loss.weight_mf_ce else count
    return LossTerms(total=count, main=main, mf=mf, p=count, distill=count)


def main_class_probs(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """Main-path class probabilities ``[B, Q]`` by the head kind: softmax, or from
    P(y > k) for CORAL/CORN."""
    if out.main_logits is None:
        return None
    return main_head(spec.main).class_probs(out.main_logits.float())


def rank_labels(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """Main-path labels ``[B]`` by the head kind's own rule (CORAL/CORN: the count of
    thresholds passed); None where its label is the argmax."""
    if out.main_logits is None:
        return None
    return main_head(spec.main).rank_labels(out.main_logits)


def main_labels(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """Main-path labels ``[B]``: the CORAL/CORN rank decoding, else the argmax."""
    ranks = rank_labels(out, spec)
    if ranks is not None or out.main_logits is None:
        return ranks
    return out.main_logits.argmax(dim=-1)
