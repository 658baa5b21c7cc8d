"""The training objective and the reading of the heads' outputs: Eq. (loss) with the
methods' variations, and main-path class probabilities and labels (CORAL/CORN by their rank
rules)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from dfil.config.cell import LossConfig
from dfil.core.methods import MethodSpec
from dfil.model.dual_path import HeadOutputs
from dfil.model.losses import (
    LossTerms,
    coral_label,
    coral_levels,
    coral_loss,
    corn_label,
    corn_loss,
    distillation_loss,
    exceedance_to_class_probs,
)


def effective_lambda_dfil(spec: MethodSpec, loss: LossConfig) -> float:
    return loss.lambda_dfil if spec.lambda_dfil is None else spec.lambda_dfil


def compute_loss(out: HeadOutputs, y: torch.Tensor, p_target: torch.Tensor | None,
                 spec: MethodSpec, loss: LossConfig,
                 class_weights: torch.Tensor | None = None) -> LossTerms:
    """Eq. (loss) for one batch, plus the method's variations.

    L = CE_w(y_hat, y) + lambda_DFIL CE_w(mu, y) + lambda_p mean (p_hat - p)^2
        [+ lambda_distill tau^2 KL(softmax(y_hat/tau) || softmax(mu/tau))].
    CORAL/CORN replace the main CE with their own losses (unweighted). ``y [B]`` int labels,
    ``p_target [B]`` proportions, ``class_weights [Q]`` or None.
    """
    zero = torch.zeros((), device=y.device)
    main = mf = p_term = distill = zero
    if spec.main == "classifier":
        main = F.cross_entropy(out.main_logits.float(), y, weight=class_weights)
    elif spec.main in ("coral", "corn"):
        num_classes = out.main_logits.shape[-1] + 1
        logits = out.main_logits.float()
        main = (coral_loss(logits, coral_levels(y, num_classes)) if spec.main == "coral"
                else corn_loss(logits, y, num_classes))
    lam = effective_lambda_dfil(spec, loss)
    if out.mf_scores is not None and lam > 0:
        weight = class_weights if loss.weight_mf_ce else None
        mf = lam * F.cross_entropy(out.mf_scores.float(), y, weight=weight)
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
    weights for a weighted cross-entropy, CORN's count of (example, task) pairs. Each is
    a sum over examples, so a batch's is the sum of its parts': gradient accumulation
    rescales each part's term by part / whole (:func:`dfil.train.step.train_step`)."""
    count = torch.full((), float(y.numel()), device=y.device)
    weighted = count if class_weights is None else class_weights[y].float().sum()
    if spec.main == "classifier":
        main = weighted
    elif spec.main == "corn":
        main = (y.clamp(max=num_classes - 2) + 1).float().sum()
    else:
        main = count
    mf = weighted if loss.weight_mf_ce else count
    return LossTerms(total=count, main=main, mf=mf, p=count, distill=count)


def main_class_probs(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """Main-path class probabilities ``[B, Q]``: softmax, or from P(y > k) for CORAL/CORN."""
    if out.main_logits is None:
        return None
    logits = out.main_logits.float()
    if spec.main == "coral":
        return exceedance_to_class_probs(torch.sigmoid(logits))
    if spec.main == "corn":
        return exceedance_to_class_probs(torch.cumprod(torch.sigmoid(logits), dim=1))
    return torch.softmax(logits, dim=-1)


def rank_labels(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """CORAL/CORN labels ``[B]`` by their rank rule (count of thresholds passed); None for
    a method whose main path is not an ordinal head (its label is the argmax)."""
    if out.main_logits is None:
        return None
    if spec.main == "coral":
        return coral_label(out.main_logits)
    if spec.main == "corn":
        return corn_label(out.main_logits)
    return None


def main_labels(out: HeadOutputs, spec: MethodSpec) -> torch.Tensor | None:
    """Main-path labels ``[B]``: the CORAL/CORN rank decoding, else the argmax."""
    ranks = rank_labels(out, spec)
    if ranks is not None or out.main_logits is None:
        return ranks
    return out.main_logits.argmax(dim=-1)
