"""One optimisation step, with no host synchronisation: the step mechanics of the loop.

Forward under autocast, the loss, backward, gradient clipping, the optimizer and the
learning-rate schedule, all queued on the device; the loss terms come back as device
tensors and nothing here reads a device value on the host, so the host can build and
send the next batch while the device works. A step may take its batch in parts
(gradient accumulation, when a CUDA out-of-memory error made training halve its
micro-batch): each part's loss terms are rescaled by its share of the whole batch's
denominators, so the summed gradient is the whole batch's to rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

import torch
from torch import nn

from dfil.config.cell import LossConfig
from dfil.core.methods import MethodSpec
from dfil.engine.device import autocast
from dfil.engine.loader import Batch
from dfil.engine.predict import forward_batch
from dfil.model.losses import LossTerms
from dfil.model.objective import compute_loss, loss_denominators


def make_optimizer(groups: list[dict], betas, eps: float, weight_decay: float):
    """AdamW over ``groups``, fused: one kernel per step on CUDA and, on the CPU, one
    call over all tensors (also faster than foreach for a heads-only model's many small
    tensors). Fused keeps the step counters as tensors on the parameters' device, so the
    update never reads them on the host (foreach does, with ``.item()`` per step)."""
    return torch.optim.AdamW(groups, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                             fused=True)


@dataclass(frozen=True)
class StepSetup:
    """What every step of one attempt uses, built once per attempt.

    ``weights [Q]`` are the class weights of the loss (None: unweighted); ``dtype`` the
    autocast dtype (None: no autocast). The method's spec, the trainable tensors (for
    gradient clipping) and the device are read off ``model`` once, here.
    """

    model: nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    loss: LossConfig
    weights: torch.Tensor | None
    grad_clip: float
    dtype: torch.dtype | None
    spec: MethodSpec = field(init=False)
    num_classes: int = field(init=False)
    trainable: tuple[nn.Parameter, ...] = field(init=False)
    device: torch.device = field(init=False)

    def __post_init__(self):
        params = tuple(self.model.parameters())
        object.__setattr__(self, "spec", self.model.heads.spec)
        object.__setattr__(self, "num_classes", self.model.heads.num_classes)
        object.__setattr__(self, "trainable", tuple(p for p in params if p.requires_grad))
        object.__setattr__(self, "device", params[0].device)


def train_step(setup: StepSetup, batch: Batch | Sequence[Batch]) -> LossTerms:
    """Forward, loss, backward, clip, update for one :class:`Batch` (or one batch given
    as parts, whose gradients are accumulated); returns its loss terms (device scalars,
    graph-free)."""
    terms = _backward(setup, batch) if isinstance(batch, Batch) else _accumulate(setup, batch)
    torch.nn.utils.clip_grad_norm_(setup.trainable, setup.grad_clip)
    setup.optimizer.step()
    setup.scheduler.step()
    setup.optimizer.zero_grad(set_to_none=True)
    return LossTerms(**{k: v.detach() for k, v in vars(terms).items()})


def _backward(setup: StepSetup, batch: Batch, share: LossTerms | None = None) -> LossTerms:
    """Forward and backward of ``batch``; each loss term times its ``share`` (a part's
    denominator over the whole batch's; None: the batch is whole)."""
    with autocast(setup.device, setup.dtype):
        out = forward_batch(setup.model, batch)
    terms = compute_loss(out, batch.y, batch.p, setup.spec, setup.loss, setup.weights)
    if share is not None:
        parts = {f.name: getattr(terms, f.name) * getattr(share, f.name)
                 for f in fields(LossTerms) if f.name != "total"}
        terms = LossTerms(total=sum(parts.values()), **parts)
    terms.total.backward()
    return terms


def _accumulate(setup: StepSetup, parts: Sequence[Batch]) -> LossTerms:
    """Gradients of a batch given as ``parts``, summed into the parameters' ``.grad``;
    the whole batch's loss terms (the parts' rescaled terms summed)."""
    dens = [loss_denominators(b.y, setup.spec, setup.loss, setup.num_classes, setup.weights)
            for b in parts]
    names = [f.name for f in fields(LossTerms)]
    whole = {n: sum(getattr(d, n) for d in dens) for n in names}
    sums: dict[str, torch.Tensor] = {}
    for batch, den in zip(parts, dens, strict=True):
        share = LossTerms(**{n: getattr(den, n) / whole[n] for n in names})
        terms = _backward(setup, batch, share)
        for n in names:
            sums[n] = sums.get(n, 0.0) + getattr(terms, n).detach()
    return LossTerms(**sums)
