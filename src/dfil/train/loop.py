"""The training loop of one attempt (App. C.1 recipe), preemptible and deterministic.

A linear loop with small named helpers. Per epoch it appends a record to
``train_log.jsonl``, saves the best checkpoint by validation loss (``model.safetensors``)
and the resume state (:mod:`dfil.train.resume`), so a rerun continues exactly where a
preempted run stopped and ends with the same numbers as an uninterrupted one. SIGTERM
(a preemption, or the slurm profile's warning ahead of the time limit) saves and stops;
the CLI tells a time limit on the last try from a preemption. A non-finite loss stops the
attempt at the next of those reads (:mod:`dfil.train.finite`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from dfil.config.cell import CellConfig, config_hash
from dfil.contracts.rundir import BEST, LOG, RESUME
from dfil.core.inference import mf_labels
from dfil.data.io import dumps_jsonl
from dfil.engine.batching import Encoded, batches, epoch_order, grouped_batches
from dfil.engine.checkpoint import save_checkpoint
from dfil.engine.device import autocast_dtype, progress, sync_guard
from dfil.engine.loader import Loader
from dfil.engine.predict import Collector, heads_centers, layout_for, outputs
from dfil.model.losses import inverse_frequency_weights
from dfil.model.objective import compute_loss
from dfil.train.finite import FiniteWatch, check_validation
from dfil.train.resume import AttemptState, StopFlag
from dfil.train.step import StepSetup, make_optimizer, train_step
from dfil.util.atomic import atomic_write_bytes
from dfil.util.errors import Preempted


@dataclass(frozen=True)
class TrainData:
    train: Encoded
    val: Encoded
    pad_id: int | None  # None in frozen-backbone mode: batches are cached features


def lr_factor(step: int, total: int, warmup: int) -> float:
    """Linear warmup to 1 over ``warmup`` steps, then cosine decay to 0 at ``total``."""
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def param_groups(model, cell: CellConfig) -> list[dict]:
    """Three groups (App. C.1): LoRA 2e-5, heads 1e-3, MF 1e-2, each with its weight decay
    (``train.weight_decay``; the heads' ``train.weight_decay_heads`` where set); frozen
    tensors left out."""
    groups = {"lora": [], "heads": [], "mf": []}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        key = "mf" if name.startswith("heads.mf.") else "heads" if name.startswith(
            "heads.") else "lora"
        groups[key].append(param)
    cfg = cell.train
    lrs = {"lora": cfg.lr_lora, "heads": cfg.lr_heads, "mf": cfg.lr_mf}
    decay = dict.fromkeys(groups, cfg.weight_decay)
    if cfg.weight_decay_heads is not None:
        decay["heads"] = cfg.weight_decay_heads
    return [{"params": ps, "lr": lrs[k], "weight_decay": decay[k], "name": k}
            for k, ps in groups.items() if ps]


def epoch_plan(cell: CellConfig, train: Encoded, epoch: int) -> list[np.ndarray]:
    """Rows of each step's batch in ``epoch``: the seeded shuffle, grouped by prompt
    length when ``train.group_by_length`` (note R-batches); a pure function of the cell
    and the epoch, so a resumed run sees the batches an uninterrupted one would."""
    cfg = cell.train
    order = epoch_order(len(train), cfg.seed, epoch)
    if cfg.group_by_length and train.features is None:
        return grouped_batches(order, train.lengths, cfg.batch_size, cfg.seed, epoch)
    return batches(order, cfg.batch_size)


@dataclass(frozen=True)
class Place:
    """Where and how one attempt runs, none of it part of the cell's config: its run
    directory and number, the log, the micro-batch (None: each batch at once; else its
    parts with gradient accumulation), and the run's identity record
    (:mod:`dfil.contracts.identity`), which its resume state and checkpoint carry."""

    run_dir: Path
    number: int
    log: Callable[[str], None] = print
    micro_batch_size: int | None = None
    identity: dict | None = None


@dataclass(frozen=True)
class Attempt:
    """What one attempt trains with, fixed from its set-up on: its number, cell and run
    directory, the data and its batch loaders, the step's setup, and the log."""

    cell: CellConfig
    place: Place
    data: TrainData
    setup: StepSetup
    train: Loader
    val: Loader

    @property
    def number(self) -> int:
        return self.place.number

    @property
    def run_dir(self) -> Path:
        return self.place.run_dir

    def log(self, line: str) -> None:
        self.place.log(line)


def train_attempt(model, cell: CellConfig, data: TrainData, place: Place) -> dict:
    """Train ``model`` in place for one attempt; returns its summary. Raises Preempted on
    SIGTERM, NonFiniteLoss when it diverges."""
    run, state = _set_up(model, cell, data, place)
    started = time.perf_counter()
    with StopFlag() as stop:
        while state.epoch < cell.train.epochs:
            _run_epoch(run, state, stop)
            _end_epoch(run, state)
    return {"attempt": place.number, "stop_grad_p": cell.model.loss.stop_grad_p,
            "best_epoch": state.best_epoch, "best_val_loss": state.best_val_loss,
            "final": state.history[-1], "resumes": state.resumes,
            "train_seconds_this_process": time.perf_counter() - started}


def optimization(model, cell: CellConfig, n_train: int):
    """The attempt's AdamW over ``model``'s parameter groups and its schedule (linear
    warmup, cosine decay over every step of training ``n_train`` examples)."""
    cfg = cell.train
    total = cfg.epochs * math.ceil(n_train / cfg.batch_size)
    warmup = max(1, int(round(cfg.warmup_ratio * total)))
    optimizer = make_optimizer(param_groups(model, cell), cfg.betas, cfg.adam_eps,
                               cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, total, warmup))
    return optimizer, scheduler


def class_weights(cell: CellConfig, train: Encoded, device) -> torch.Tensor | None:
    """``[Q]`` the loss's class weights from the training labels (None: unweighted)."""
    if cell.model.loss.class_weights != "inverse_frequency":
        return None
    return inverse_frequency_weights(torch.from_numpy(train.labels).to(device),
                                     cell.model.num_classes)


def _set_up(model, cell: CellConfig, data: TrainData,
            place: Place) -> tuple[Attempt, AttemptState]:
    """The attempt's optimizer, schedule, loss weights and loaders, and its state: fresh,
    or where ``resume.pt`` left it."""
    cfg = cell.train
    device = next(model.parameters()).device
    optimizer, scheduler = optimization(model, cell, len(data.train))
    setup = StepSetup(model, optimizer, scheduler, cell.model.loss,
                      class_weights(cell, data.train, device), cfg.grad_clip,
                      autocast_dtype(cfg.precision, device))
    layout = layout_for(model, data.train, cfg.batching)
    run = Attempt(cell, place, data, setup,
                  train=Loader(data.train, device, layout, data.pad_id),
                  val=Loader(data.val, device, layout_for(model, data.val, "padded"),
                             data.pad_id))
    micro = place.micro_batch_size
    run.log(f"batches: {layout}" + (", grouped by length" if cfg.group_by_length
                                    and layout != "features" else "")
            + (f", in parts of {micro} (gradient accumulation)" if micro else ""))
    state = AttemptState(model, optimizer, scheduler, config_hash(cell), place.number,
                         identity=place.identity)
    if state.resume(place.run_dir / RESUME):
        run.log(f"resuming attempt {place.number} at epoch {state.epoch + 1}, "
                f"step {state.step}")
    return run, state


def step_batches(run: Attempt, plan: list[np.ndarray]):
    """(examples, batch) of each step of ``plan``: one device batch, or with a micro-batch
    the step's parts as a list (its rows cut in order)."""
    micro = run.place.micro_batch_size
    if not micro or micro >= run.cell.train.batch_size:
        yield from ((len(rows), batch) for rows, batch in zip(plan, run.train(plan),
                                                              strict=True))
        return
    parts = run.train([rows[i:i + micro] for rows in plan
                       for i in range(0, len(rows), micro)])
    for rows in plan:
        yield len(rows), [next(parts) for _ in range(0, len(rows), micro)]


def _run_epoch(run: Attempt, state: AttemptState, stop: StopFlag) -> None:
    """The steps left in epoch ``state.epoch``, each one's loss terms added to
    ``state.sums``; on SIGTERM the state after the step is saved, then Preempted raised. A
    non-finite loss raises NonFiniteLoss at the epoch's end or a signal, whichever first."""
    run.setup.model.train()
    plan = epoch_plan(run.cell, run.data.train, state.epoch)
    state.sums = {k: v.to(run.setup.device) for k, v in state.sums.items()}
    bar = progress(range(state.step, len(plan)), total=len(plan), initial=state.step,
                   desc=f"attempt {run.number} epoch {state.epoch + 1}/{run.cell.train.epochs}")
    watch = FiniteWatch(run.setup.device)
    with sync_guard() as guard:
        for s, (size, batch) in zip(bar, step_batches(run, plan[state.step:]), strict=True):
            terms = train_step(run.setup, batch)
            for k, v in vars(terms).items():  # stays on device: no host sync
                state.sums[k] = state.sums.get(k, 0.0) + v * size
            watch.add(terms.total, s + 1)
            guard.arm()  # from the first step on, any host sync is reported
            if stop.raised:
                guard.disarm()
                watch.check(state.epoch + 1)  # a diverged run saves no state to resume
                _on_signal(run, state, stop, s + 1)
                guard.arm()
    watch.check(state.epoch + 1)


def _on_signal(run: Attempt, state: AttemptState, stop: StopFlag, step: int) -> None:
    """Save the state after ``step`` of the epoch, then stop (Preempted)."""
    state.step = step
    state.save(run.run_dir / RESUME)
    where = f"at epoch {state.epoch + 1}, step {step}; state saved to {run.run_dir / RESUME}"
    raise Preempted(f"{stop.raised} {where}")


def _end_epoch(run: Attempt, state: AttemptState) -> None:
    """Validate, then :func:`finish_epoch`."""
    finish_epoch(state, run.setup.model, run.cell, run.place, len(run.data.train),
                 _validate(run))


def finish_epoch(state: AttemptState, model, cell: CellConfig, place: Place, n_train: int,
                 val: dict) -> None:
    """Record the epoch with its validation numbers ``val`` (history, ``train_log.jsonl``,
    the log), keep the best checkpoint by validation loss, and save the state at the
    start of the next epoch."""
    epoch = state.epoch + 1
    record = {"attempt": place.number, "epoch": epoch}
    record.update({f"train_{k}": float(v) / n_train for k, v in state.sums.items()})
    record.update(val)
    check_validation(record["val_loss"], epoch)
    centers = heads_centers(model.heads)
    if centers is not None:
        record["centers"] = [round(float(c), 5) for c in centers]
    state.history.append(record)
    if record["val_loss"] < state.best_val_loss:
        state.best_val_loss, state.best_epoch = record["val_loss"], epoch
        save_checkpoint(model, cell.model, place.run_dir / BEST,
                        extra={"epoch": str(epoch), "attempt": str(place.number),
                               **({"identity": place.identity} if place.identity else {})})
    state.epoch, state.step, state.sums = epoch, 0, {}
    state.save(place.run_dir / RESUME)
    atomic_write_bytes(place.run_dir / LOG, dumps_jsonl(state.history))
    place.log(_epoch_line(record))


def _validate(run: Attempt) -> dict:
    """Validation loss (same weighted loss as training) and accuracies of each path, in
    one pass whose numbers reach the host once, at its end."""
    model, spec, val = run.setup.model, run.setup.spec, run.val.enc
    total = torch.zeros((), dtype=torch.float64, device=run.val.device)
    collect = Collector(spec)
    plan = batches(np.arange(len(val)), run.cell.train.eval_batch_size)
    for batch, out in outputs(model, run.val, plan, run.setup.dtype):
        terms = compute_loss(out, batch.y, batch.p, spec, run.setup.loss, run.setup.weights)
        total += terms.total.double() * batch.size
        collect.add(out)
    return validation_record(total, collect, val, model.heads)


def validation_record(total: torch.Tensor, collect: Collector, val: Encoded, heads) -> dict:
    """The epoch's validation numbers from the loss ``total`` summed over ``val``'s
    examples and the collected outputs of ``heads``: the first host read of the pass."""
    preds = collect.result()
    result = {"val_loss": float(total) / len(val)}
    if preds.main_probs is not None:
        result["val_acc_main"] = float((preds.main_labels == val.labels).mean())
    mf = mf_labels(preds.p, preds.mf_scores, heads_centers(heads))
    if mf is not None:
        result["val_acc_mf"] = float((mf == val.labels).mean())
    return result


def _epoch_line(r: dict) -> str:
    parts = [f"attempt {r['attempt']} epoch {r['epoch']:>2}",
             f"loss {r['train_total']:.4f} (main {r['train_main']:.4f} mf {r['train_mf']:.4f} "
             f"p {r['train_p']:.4f} distill {r['train_distill']:.4f})",
             f"val_loss {r['val_loss']:.4f}"]
    for key in ("val_acc_main", "val_acc_mf"):
        if key in r:
            parts.append(f"{key} {r[key]:.3f}")
    if "centers" in r:
        parts.append("centers " + " ".join(f"{c:.3f}" for c in r["centers"]))
    return " | ".join(parts)
