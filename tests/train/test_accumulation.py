"""Gradient accumulation (the out-of-memory retry's half micro-batches): a step given its
batch in parts updates the model as the whole batch does, within float rounding."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_step import examples

from dfil.config.cell import LossConfig
from dfil.engine.loader import Loader
from dfil.model import build_model
from dfil.model.losses import inverse_frequency_weights
from dfil.train.step import StepSetup, train_step
from tinymodel import tiny_config


def one_step(method: str, parts: int, weighted: bool):
    """The trainable tensors and loss terms after one step over 8 examples, given whole
    or in ``parts`` (dropout off: the model stays in eval mode)."""
    model = build_model(tiny_config(method), seed=0)
    enc = examples(n=8)
    loader = Loader(enc, "cpu", "padded", pad_id=0)
    trainable = [p for p in model.parameters() if p.requires_grad]
    # plain SGD: the update is the gradient (Adam's first step divides it by its own
    # size, which magnifies rounding in gradients near zero)
    optimizer = torch.optim.SGD(trainable, lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    weights = inverse_frequency_weights(torch.as_tensor(enc.labels), 8) if weighted else None
    setup = StepSetup(model, optimizer, scheduler, LossConfig(lambda_p=0.5), weights, 1.0,
                      None)
    model.eval()
    rows = np.arange(8)
    if parts == 1:
        batch = next(loader([rows]))
    else:
        batch = list(loader(np.array_split(rows, parts)))
    terms = train_step(setup, batch)
    return [p.detach().clone() for p in trainable], terms


@pytest.mark.parametrize("method,weighted", [("dfil", True), ("dfil", False),
                                             ("coral", False), ("corn", False)])
def test_two_half_micro_batches_give_the_whole_batchs_step(method, weighted):
    whole, whole_terms = one_step(method, 1, weighted)
    halves, half_terms = one_step(method, 2, weighted)
    for a, b in zip(whole, halves, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    for name in ("total", "main", "mf", "p"):
        torch.testing.assert_close(getattr(whole_terms, name), getattr(half_terms, name),
                                   rtol=1e-5, atol=1e-6)
    # the step moved the model: the comparison is not between two untouched models
    untouched = [p for p in build_model(tiny_config(method), seed=0).parameters()
                 if p.requires_grad]
    assert any(not torch.equal(a, b) for a, b in zip(whole, untouched, strict=True))
