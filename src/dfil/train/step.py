"""One optimisation step, with no host synchronisation: the step mechanics of the loop.

Forward under autocast, the loss, backward, gradient clipping, the optimizer and the
learning-rate schedule, all queued on the device; the loss terms come back as device
tensors and nothing here reads a device value on the host, so the host can build and
send the next batch while the device works.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from dfil.cellconfig import LossConfig
from dfil.engine.device import autocast
from dfil.engine.loader import Batch
from dfil.engine.predict import forward_batch
from dfil.methods import MethodSpec
from dfil.model.losses import LossTerms
from dfil.model.objective import compute_loss


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
    trainable: tuple[nn.Parameter, ...] = field(init=False)
    device: torch.device = field(init=False)

    def __post_init__(self):
        params = tuple(self.model.parameters())
        object.__setattr__(self, "spec", self.model.heads.spec)
        object.__setattr__(self, "trainable", tuple(p for p in params if p.requires_grad))
        object.__setattr__(self, "device", params[0].device)


def train_step(setup: StepSetup, batch: Batch) -> LossTerms:
    """Forward, loss, backward, clip, update for one :class:`Batch`; returns its loss
    terms (device scalars, graph-free)."""
    with autocast(setup.device, setup.dtype):
        out = forward_batch(setup.model, batch)
    terms = compute_loss(out, batch.y, batch.p, setup.spec, setup.loss, setup.weights)
    terms.total.backward()
    torch.nn.utils.clip_grad_norm_(setup.trainable, setup.grad_clip)
    setup.optimizer.step()
    setup.scheduler.step()
    setup.optimizer.zero_grad(set_to_none=True)
    return LossTerms(**{k: v.detach() for k, v in vars(terms).items()})
