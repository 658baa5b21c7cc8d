"""Losses and label decoding: Eq. (loss), distillation (App. E.1), CORAL and CORN.

CORAL and CORN follow coral-pytorch (Raschka et al.) term for term; the tests use that
package as an oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


def inverse_frequency_weights(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """w_k = N / (Q_present * n_k) for classes present in ``labels`` ``[N]``, 0 for absent ones.

    Present classes average weight 1 under the empirical distribution. Returns ``[Q]``.
    """
    counts = torch.bincount(labels.long(), minlength=num_classes).double()
    present = counts > 0
    # torch.where, not boolean indexing: no nonzero(), so no host sync, and every tensor
    # on the labels' device whatever the ambient default device.
    weights = torch.where(present, labels.numel() / (present.sum() * counts.clamp_min(1)),
                          counts.new_zeros(()))
    return weights.float()


# --- CORAL ---------------------------------------------------------------------------


def coral_levels(y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Extended binary targets ``[B] -> [B, Q-1]`` with level_k = 1[y > k]."""
    ks = torch.arange(num_classes - 1, device=y.device)
    return (y.unsqueeze(-1) > ks).to(torch.float32)


def coral_loss(logits: torch.Tensor, levels: torch.Tensor) -> torch.Tensor:
    """CORAL loss, mean over the batch. ``logits, levels: [B, Q-1]``."""
    logsig = F.logsigmoid(logits)
    term = logsig * levels + (logsig - logits) * (1 - levels)
    return (-term.sum(dim=1)).mean()


def coral_label(logits: torch.Tensor) -> torch.Tensor:
    """Rank prediction sum_k 1[sigmoid(logit_k) > 0.5]. ``[B, Q-1] -> [B]``."""
    return (torch.sigmoid(logits) > 0.5).sum(dim=1)


# --- CORN ----------------------------------------------------------------------------


def corn_loss(logits: torch.Tensor, y: torch.Tensor, num_classes: int) -> torch.Tensor:
    """CORN loss: task k is trained on examples with y >= k, target 1[y > k].

    Sum of binary cross-entropies over all (example, task) pairs in a task's conditional
    training set, divided by the number of such pairs. ``logits [B, Q-1], y [B]``.
    """
    ks = torch.arange(num_classes - 1, device=y.device)
    in_task = (y.unsqueeze(-1) >= ks).to(logits.dtype)
    target = (y.unsqueeze(-1) > ks).to(logits.dtype)
    logsig = F.logsigmoid(logits)
    term = logsig * target + (logsig - logits) * (1 - target)
    return -(term * in_task).sum() / in_task.sum()


def corn_label(logits: torch.Tensor) -> torch.Tensor:
    """Rank prediction from chained conditionals: sum_k 1[prod_{j<=k} sigmoid > 0.5]."""
    return (torch.cumprod(torch.sigmoid(logits), dim=1) > 0.5).sum(dim=1)


def exceedance_to_class_probs(p_greater: torch.Tensor) -> torch.Tensor:
    """P(y > k) ``[B, Q-1]`` -> P(y = k) ``[B, Q]``, clipped at 0 and renormalised.

    CORN's chained P(y > k) is non-increasing in k, so no clipping happens there; CORAL's
    can increase while training, and the clipped mass is spread back by renormalising.
    """
    ones = torch.ones_like(p_greater[:, :1])
    zeros = torch.zeros_like(p_greater[:, :1])
    upper = torch.cat([ones, p_greater], dim=1)
    lower = torch.cat([p_greater, zeros], dim=1)
    probs = (upper - lower).clamp_min(0)
    return probs / probs.sum(dim=1, keepdim=True).clamp_min(1e-12)


# --- DFIL ----------------------------------------------------------------------------


@dataclass
class LossTerms:
    """Scalar loss terms of one batch; ``total`` is what is back-propagated."""

    total: torch.Tensor
    main: torch.Tensor
    mf: torch.Tensor
    p: torch.Tensor
    distill: torch.Tensor


def distillation_loss(
    logits: torch.Tensor, memberships: torch.Tensor, tau: float, detach_teacher: bool = True
) -> torch.Tensor:
    """App. E.1: tau^2 * KL(softmax(logits/tau) || softmax(mu/tau)), mean over the batch.

    Written as printed: the main distribution is the first argument. With
    ``detach_teacher`` the MF side is a fixed target, so the gradient reaches the classifier.
    """
    teacher = memberships.detach() if detach_teacher else memberships
    log_p = F.log_softmax(logits / tau, dim=-1)
    log_q = F.log_softmax(teacher / tau, dim=-1)
    kl = (log_p.exp() * (log_p - log_q)).sum(dim=-1)
    return tau**2 * kl.mean()
