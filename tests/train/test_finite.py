"""A non-finite loss stops the attempt at the first read the loop makes anyway, naming
its first step and the remedy; watching for it reads nothing from the device per step.
Tiny random Llama, CPU."""

from __future__ import annotations

import math

import pytest
import torch
from test_step import SyncOps, examples

import dfil.train.step as step_module
from dfil.config.cell import CellConfig, TrainConfig
from dfil.model import build_model
from dfil.train.finite import FiniteWatch, check_validation
from dfil.train.loop import Place, TrainData, train_attempt
from dfil.util.errors import NonFiniteLoss
from tinymodel import tiny_config


def test_the_watch_names_the_first_non_finite_step():
    watch = FiniteWatch("cpu")
    for step, loss in enumerate([0.5, 0.4, math.nan, 0.3, math.inf], 1):
        watch.add(torch.tensor(loss), step)
    with pytest.raises(NonFiniteLoss, match=r"first at epoch 2, step 3: .*lower the "
                                            r"learning rates \(train\.lr_lora"):
        watch.check(2)


def test_a_finite_epoch_passes_and_inf_counts_as_non_finite():
    watch = FiniteWatch("cpu")
    watch.add(torch.tensor(1.0), 1)
    watch.check(1)
    watch.add(torch.tensor(-math.inf), 2)
    with pytest.raises(NonFiniteLoss, match="step 2"):
        watch.check(1)
    with pytest.raises(NonFiniteLoss, match="validation loss after epoch 4 is nan"):
        check_validation(math.nan, 4)


def test_watching_a_step_reads_nothing_from_the_device():
    watch, losses = FiniteWatch("cpu"), torch.tensor([1.0, math.nan, 2.0])
    with SyncOps() as seen:
        for step, loss in enumerate(losses, 1):
            watch.add(loss, step)
    assert seen.found == []


def attempt(tmp_path, n: int, epochs: int = 1):
    """One attempt on ``n`` examples in batches of 4 (``n / 4`` steps an epoch)."""
    config = tiny_config()
    cell = CellConfig(model=config, train=TrainConfig(epochs=epochs, batch_size=4,
                                                      eval_batch_size=8, seed=1))
    model = build_model(config, seed=0)
    data = TrainData(train=examples(n=n), val=examples(n=8, seed=1), pad_id=0)
    return train_attempt(model, cell, data, Place(tmp_path, 1, log=lambda line: None))


def test_the_check_adds_no_host_sync_per_step(tmp_path, monkeypatch):
    """The syncs of an epoch do not grow with its steps (2 steps or 6), and the watch is
    read once an epoch, at its end."""
    reads = []
    real = FiniteWatch.check
    monkeypatch.setattr(FiniteWatch, "check", lambda self, epoch: (reads.append(epoch),
                                                                  real(self, epoch)))
    counts = []
    for n in (8, 24):
        with SyncOps() as seen:
            attempt(tmp_path / str(n), n)
        counts.append(len(seen.found))
    assert counts[0] == counts[1]
    assert reads == [1, 1]


def test_a_diverging_attempt_stops_at_its_first_non_finite_step(tmp_path, monkeypatch):
    """From step 3 on the loss is NaN (as a diverging learning rate makes it): the attempt
    stops at the end of epoch 1 of 3, before validating or keeping a checkpoint."""
    real, calls = step_module.compute_loss, [0]

    def poisoned(*args, **kwargs):
        terms = real(*args, **kwargs)
        calls[0] += 1
        if calls[0] == 3:
            terms.total = terms.total * math.nan
        return terms

    monkeypatch.setattr(step_module, "compute_loss", poisoned)
    with pytest.raises(NonFiniteLoss, match="first at epoch 1, step 3:"):
        attempt(tmp_path, 24, epochs=3)
    assert calls[0] == 6  # the epoch's steps ran, no more
    assert not (tmp_path / "model.safetensors").exists()
    assert not (tmp_path / "train_log.jsonl").exists()
