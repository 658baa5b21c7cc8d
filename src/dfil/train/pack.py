"""One optimisation step of a pack (:class:`dfil.model.pack.PackedModel`): the K seeds'
micro-batches through one forward and one backward of the shared base, each seed's loss
on its own rows, each seed's gradient clipped on its own (never one norm over the pack),
one AdamW update over every seed's tensors (per tensor, so as K optimizers would), with
no host synchronisation, as :func:`dfil.train.step.train_step`.

A pack batch is one :class:`~dfil.engine.loader.Batch` over the K seeds' example rows
side by side, ``b`` each (seed k's at ``k b : (k + 1) b``); a padding-free one also needs
its seeds' token bounds (:func:`dfil.model.pack.seed_spans`, host ints).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from dfil.config.cell import LossConfig
from dfil.core.methods import MethodSpec
from dfil.engine.device import autocast
from dfil.engine.loader import Batch
from dfil.model.dual_path import HeadOutputs
from dfil.model.losses import LossTerms
from dfil.model.objective import compute_loss
from dfil.model.pack import PackedModel


@dataclass(frozen=True)
class PackSetup:
    """What every step of one pack uses: as :class:`dfil.train.step.StepSetup`, with
    ``weights[k] [Q]`` seed k's class weights (None: unweighted)."""

    pack: PackedModel
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    loss: LossConfig
    weights: Sequence[torch.Tensor | None]
    grad_clip: float
    dtype: torch.dtype | None
    spec: MethodSpec = field(init=False)
    per_seed: tuple[tuple[torch.nn.Parameter, ...], ...] = field(init=False)
    device: torch.device = field(init=False)

    def __post_init__(self):
        pack = self.pack
        object.__setattr__(self, "spec", pack.heads[0].spec)
        object.__setattr__(self, "per_seed", tuple(tuple(pack.seed_parameters(k))
                                                   for k in range(len(pack.seeds))))
        object.__setattr__(self, "device", next(pack.parameters()).device)


def forward_pack(pack: PackedModel, batch: Batch,
                 bounds: Sequence[int] | None = None) -> list[HeadOutputs]:
    """Each seed's head outputs for a pack ``batch`` (padded, or padding-free with its
    seeds' token ``bounds``)."""
    if batch.cu_seq_lens is None:
        return pack.forward_padded(batch.input_ids, batch.attention_mask, batch.last)
    if bounds is None:
        raise ValueError("a padding-free pack batch needs its seeds' token bounds")
    return pack.forward_packed(batch.input_ids, batch.position_ids, batch.last,
                               batch.cu_seq_lens, batch.max_length, bounds)


def pack_step(setup: PackSetup, batch: Batch,
              bounds: Sequence[int] | None = None) -> list[LossTerms]:
    """Forward, each seed's loss, one backward, per-seed clipping and one update for a
    pack ``batch``; each seed's loss terms (device scalars, graph-free)."""
    with autocast(setup.device, setup.dtype):
        outs = forward_pack(setup.pack, batch, bounds)
    b = batch.size // len(outs)
    terms = [compute_loss(out, batch.y[k * b:(k + 1) * b], batch.p[k * b:(k + 1) * b],
                          setup.spec, setup.loss, setup.weights[k])
             for k, out in enumerate(outs)]
    total = terms[0].total
    for t in terms[1:]:
        total = total + t.total
    total.backward()
    for params in setup.per_seed:
        torch.nn.utils.clip_grad_norm_(params, setup.grad_clip)
    setup.optimizer.step()
    setup.scheduler.step()
    setup.optimizer.zero_grad(set_to_none=True)
    return [LossTerms(**{n: v.detach() for n, v in vars(t).items()}) for t in terms]
