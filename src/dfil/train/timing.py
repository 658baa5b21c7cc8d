"""A few timed training steps of a cell's model, as the trainer runs them: the acceptance
run's throughput (tokens/s, steps/s) and peak memory on this machine.

The model is the cell's own (its backbone loaded as training loads it: hub weights from
the cache, 4-bit where asked), trained by :func:`dfil.train.step.train_step` on batches
of the cell's size and layout; the prompts are random token ids of the task's mean
tokenized length (:data:`dfil.cost.rates.PROMPTS`, cut to ``data.max_length``), since a
step's speed does not depend on which tokens it reads. Two untimed steps come first
(kernel selection, allocator warm-up).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from dfil.config.cell import CellConfig
from dfil.cost.rates import PROMPTS
from dfil.engine.batching import Encoded, batches
from dfil.engine.device import autocast_dtype
from dfil.engine.loader import Loader
from dfil.engine.predict import layout_for
from dfil.model import build_model
from dfil.train.loop import param_groups
from dfil.train.step import StepSetup, make_optimizer, train_step

#: Untimed steps before the timed ones.
WARMUP = 2
#: Prompt length where the task's is not measured (dfil.cost.rates.PROMPTS).
DEFAULT_TOKENS = 120.0


@dataclass(frozen=True)
class Timing:
    """``steps`` timed training steps of ``batch`` prompts: their wall-clock ``seconds``,
    the ``tokens`` they trained on, and the peak GPU memory (None on a CPU)."""

    steps: int
    batch: int
    seconds: float
    tokens: int
    layout: str
    peak_gpu_gib: float | None

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds


def prompt_tokens(cell: CellConfig) -> float:
    """The mean prompt length the timed batches use: the task's measured mean, at most
    the cell's ``data.max_length``."""
    return min(PROMPTS[cell.data.task].mean if cell.data.task in PROMPTS else DEFAULT_TOKENS,
               float(cell.data.max_length))


def random_prompts(n: int, vocab: int, mean: float, classes: int, seed: int) -> Encoded:
    """``n`` prompts of random ids in ``[3, vocab)``, lengths ~ N(mean, mean / 4) within
    ``[8, 2 * mean]``, with random labels in ``[0, classes)`` and proportions in [0, 1)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(np.round(rng.normal(mean, mean / 4, n)), 8, 2 * mean).astype(int)
    ids = tuple(tuple(rng.integers(3, vocab, size=k).tolist()) for k in lengths)
    return Encoded(ids=ids, labels=rng.integers(0, classes, n),
                   p=rng.random(n).astype(np.float32))


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(cell: CellConfig, steps: int, device: torch.device) -> tuple[Timing, dict]:
    """Build ``cell``'s model on ``device`` and time ``steps`` training steps of it (after
    :data:`WARMUP` untimed ones), at the cell's batch size, layout and precision; returns
    the timing and the backbone's architecture (its transformers config as a dict)."""
    cfg = cell.train
    model = build_model(cell.model, seed=cfg.seed).to(device)
    model.train()
    vocab = int(model.backbone.config.vocab_size)
    data = random_prompts((WARMUP + steps) * cfg.batch_size, vocab, prompt_tokens(cell),
                          cell.model.num_classes, cfg.seed)
    optimizer = make_optimizer(param_groups(model, cell), cfg.betas, cfg.adam_eps,
                               cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    setup = StepSetup(model, optimizer, scheduler, cell.model.loss, None, cfg.grad_clip,
                      autocast_dtype(cfg.precision, device))
    layout = layout_for(model, data, cfg.batching)
    loader = Loader(data, device, layout, pad_id=0)
    plan = batches(np.arange(len(data)), cfg.batch_size)
    for batch in loader(plan[:WARMUP]):
        train_step(setup, batch)
    _sync(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    started = time.perf_counter()
    for batch in loader(plan[WARMUP:]):
        train_step(setup, batch)
    _sync(device)
    seconds = time.perf_counter() - started
    peak = (torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda"
            else None)
    tokens = int(data.lengths[np.concatenate(plan[WARMUP:])].sum())
    arch = model.backbone.config.to_dict()
    return Timing(steps, cfg.batch_size, seconds, tokens, layout, peak), arch
