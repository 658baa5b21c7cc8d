"""One optimisation step, with no host synchronisation: the step mechanics of the loop.

Forward under autocast, the loss, backward, gradient clipping, the optimizer and the
learning-rate schedule, all queued on the device; the loss terms come back as device
tensors and nothing here reads a device value on the host, so the host can build and
send the next batch while the device works.
"""

from __future__ import annotations

import torch

from dfil.engine.device import autocast
from dfil.engine.loader import Batch
from dfil.engine.predict import forward_batch
from dfil.model.losses import LossTerms
from dfil.model.objective import compute_loss


def make_optimizer(groups: list[dict], betas, eps: float, weight_decay: float):
    """AdamW over ``groups``, fused: one kernel per step on CUDA and, on the CPU, one
    call over all tensors (also faster than foreach for a heads-only model's many small
    tensors). Fused keeps the step counters as tensors on the parameters' device, so the
    update never reads them on the host (foreach does, with ``.item()`` per step)."""
    return torch.optim.AdamW(groups, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                             fused=True)


def train_step(model, batch: Batch, spec, loss_config, weights, trainable, optimizer,
               scheduler, grad_clip: float, device, dtype) -> LossTerms:
    """Forward, loss, backward, clip, update for one :class:`Batch`; returns its loss
    terms (device scalars, graph-free)."""
    with autocast(device, dtype):
        out = forward_batch(model, batch)
    terms = compute_loss(out, batch.y, batch.p, spec, loss_config, weights)
    terms.total.backward()
    torch.nn.utils.clip_grad_norm_(trainable, grad_clip)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return LossTerms(**{k: v.detach() for k, v in vars(terms).items()})
