"""A non-finite loss: watched on the device step by step, read where the loop reads the
device anyway (an epoch's end, a signal's save), so watching adds no host sync per step.

A loss that is NaN or infinite once poisons every later step through the weights; a
retry of the same config diverges the same way, so training stops at the first read
after it (:class:`~dfil.util.errors.NonFiniteLoss`, which ``dfil train`` records instead of
retrying) rather than training every epoch on ``nan`` to end without a best checkpoint.
"""

from __future__ import annotations

import math

import torch

from dfil.util.errors import NonFiniteLoss

#: The watch's value while every step has been finite.
NONE = torch.iinfo(torch.int64).max
#: What a diverged run changes (the cell's keys), said with every report of one.
REMEDY = ("lower the learning rates (train.lr_lora, train.lr_heads, train.lr_mf) or check "
          "the data for non-finite values; a retry of the same config diverges the same way")


class FiniteWatch:
    """The first step (1-based, of one epoch) whose loss was not finite, kept on the
    loss's device: :meth:`add` queues a comparison and a minimum, never a read."""

    def __init__(self, device: torch.device | str):
        self.first = torch.full((), NONE, dtype=torch.int64, device=device)

    def add(self, loss: torch.Tensor, step: int) -> None:
        """Note ``loss`` (a device scalar) of ``step``; no host sync."""
        self.first = torch.minimum(self.first, torch.where(torch.isfinite(loss), NONE, step))

    def check(self, epoch: int) -> None:
        """:class:`NonFiniteLoss` naming ``epoch`` (1-based) and the first non-finite step,
        if there was one. Reads the device: call it only where the loop syncs anyway."""
        step = int(self.first)
        if step != NONE:
            raise diverged(f"the training loss is NaN or infinite, first at epoch {epoch}, "
                           f"step {step}")


def check_validation(val_loss: float, epoch: int) -> None:
    """:class:`NonFiniteLoss` if ``val_loss`` (after epoch ``epoch``) is not finite."""
    if not math.isfinite(val_loss):
        raise diverged(f"the validation loss after epoch {epoch} is {val_loss}")


def diverged(what: str) -> NonFiniteLoss:
    return NonFiniteLoss(f"non-finite loss: {what}: the run diverged; {REMEDY}")
