"""The training loop of one attempt (App. C.1 recipe), preemptible and deterministic.

A linear loop with small named helpers. Per epoch it appends a record to
``train_log.jsonl``, saves the best checkpoint by validation loss (``model.safetensors``)
and the resume state (:mod:`dfil.train.resume`), so a rerun continues exactly where a
preempted run stopped and ends with the same numbers as an uninterrupted one.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from dfil.atomic import atomic_write_bytes
from dfil.cellconfig import CellConfig, config_hash
from dfil.contracts.rundir import BEST, LOG, RESUME
from dfil.data.io import dumps_jsonl
from dfil.engine.batching import Encoded, batches, epoch_order, grouped_batches
from dfil.engine.checkpoint import load_into, save_checkpoint, trained_state
from dfil.engine.device import autocast_dtype, progress, sync_guard
from dfil.engine.loader import Loader
from dfil.engine.predict import Collector, heads_centers, layout_for, outputs
from dfil.errors import Preempted
from dfil.inference import mf_labels
from dfil.model.losses import inverse_frequency_weights
from dfil.model.objective import compute_loss
from dfil.train.resume import (
    StopFlag,
    load_resume,
    restore_rng,
    rng_state,
    save_resume,
)
from dfil.train.step import make_optimizer, train_step


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


def _validate(model, cell, loader: Loader, weights, dtype) -> dict:
    """Validation loss (same weighted loss as training) and accuracies of each path, in
    one pass whose numbers reach the host once, at its end."""
    spec = model.heads.spec
    val = loader.enc
    total = torch.zeros((), dtype=torch.float64, device=loader.device)
    collect = Collector(spec)
    plan = batches(np.arange(len(val)), cell.train.eval_batch_size)
    for batch, out in outputs(model, loader, plan, dtype):
        terms = compute_loss(out, batch.y, batch.p, spec, cell.model.loss, weights)
        total += terms.total.double() * batch.size
        collect.add(out)
    preds = collect.result()
    result = {"val_loss": float(total) / len(val)}
    if preds.main_probs is not None:
        result["val_acc_main"] = float((preds.main_labels == val.labels).mean())
    mf = mf_labels(preds.p, preds.mf_scores, heads_centers(model.heads))
    if mf is not None:
        result["val_acc_mf"] = float((mf == val.labels).mean())
    return result


def train_attempt(model, cell: CellConfig, data: TrainData, run_dir: Path, attempt: int,
                  log=print) -> dict:
    """Train ``model`` in place for one attempt; returns its summary. Raises Preempted."""
    run_dir = Path(run_dir)
    device = next(model.parameters()).device
    dtype = autocast_dtype(cell.train.precision, device)
    spec = model.heads.spec
    cfg = cell.train
    n_train = len(data.train)
    steps_per_epoch = math.ceil(n_train / cfg.batch_size)
    total = cfg.epochs * steps_per_epoch
    warmup = max(1, int(round(cfg.warmup_ratio * total)))
    optimizer = make_optimizer(param_groups(model, cell), cfg.betas, cfg.adam_eps,
                               cfg.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, total, warmup))
    weights = None
    if cell.model.loss.class_weights == "inverse_frequency":
        weights = inverse_frequency_weights(torch.from_numpy(data.train.labels).to(device),
                                            cell.model.num_classes)
    trainable = [p for p in model.parameters() if p.requires_grad]
    layout = layout_for(model, data.train, cfg.batching)
    train_loader = Loader(data.train, device, layout, data.pad_id)
    val_loader = Loader(data.val, device, layout_for(model, data.val, "padded"), data.pad_id)
    log(f"batches: {layout}" + (", grouped by length" if cfg.group_by_length
                                and layout != "features" else ""))
    chash = config_hash(cell)
    state = load_resume(run_dir / RESUME, chash)
    if state is not None and state["attempt"] == attempt:
        load_into(model, state["trained"], run_dir / RESUME)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        restore_rng(state, device)
        epoch, step = state["epoch"], state["step"]
        history, best = state["history"], state["best"]
        sums = state["sums"]
        # Where each restart picked up: the evidence of a resume that survives Snakemake
        # deleting a restarted job's log.
        resumes = [*state.get("resumes", []), {"epoch": epoch + 1, "step": step}]
        log(f"resuming attempt {attempt} at epoch {epoch + 1}, step {step}")
    else:
        epoch, step, history, sums, resumes = 0, 0, [], {}, []
        best = {"val_loss": float("inf"), "epoch": -1}

    def snapshot(next_epoch: int, next_step: int, running: dict) -> dict:
        return {"format": "dfil-resume/1", "config_hash": chash, "attempt": attempt,
                "epoch": next_epoch, "step": next_step, "trained": trained_state(model),
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                **rng_state(device), "history": history, "best": best,
                "sums": running, "resumes": resumes}

    started = time.perf_counter()
    with StopFlag() as stop:
        while epoch < cfg.epochs:
            model.train()
            plan = epoch_plan(cell, data.train, epoch)
            running = {k: v.to(device) for k, v in sums.items()}
            bar = progress(range(step, len(plan)), total=len(plan), initial=step,
                           desc=f"attempt {attempt} epoch {epoch + 1}/{cfg.epochs}")
            with sync_guard() as guard:
                for s, batch in zip(bar, train_loader(plan[step:]), strict=True):
                    terms = train_step(model, batch, spec, cell.model.loss, weights, trainable,
                                       optimizer, scheduler, cfg.grad_clip, device, dtype)
                    for k, v in vars(terms).items():  # stays on device: no host sync
                        running[k] = running.get(k, 0.0) + v * batch.size
                    guard.arm()  # from the first step on, any host sync is reported
                    if stop.raised:
                        guard.disarm()
                        done = {k: v.detach().cpu() for k, v in running.items()}
                        save_resume(run_dir / RESUME, snapshot(epoch, s + 1, done))
                        raise Preempted(f"{stop.raised} at epoch {epoch + 1}, step {s + 1}; "
                                        f"state saved to {run_dir / RESUME}")
            record = {"attempt": attempt, "epoch": epoch + 1}
            record.update({f"train_{k}": float(v) / n_train for k, v in running.items()})
            record.update(_validate(model, cell, val_loader, weights, dtype))
            centers = heads_centers(model.heads)
            if centers is not None:
                record["centers"] = [round(float(c), 5) for c in centers]
            history.append(record)
            if record["val_loss"] < best["val_loss"]:
                best = {"val_loss": record["val_loss"], "epoch": epoch + 1}
                save_checkpoint(model, cell.model, run_dir / BEST,
                                extra={"epoch": str(epoch + 1), "attempt": str(attempt)})
            epoch, step, sums = epoch + 1, 0, {}
            save_resume(run_dir / RESUME, snapshot(epoch, 0, {}))
            atomic_write_bytes(run_dir / LOG, dumps_jsonl(history))
            log(_epoch_line(record))
    return {"attempt": attempt, "stop_grad_p": cell.model.loss.stop_grad_p,
            "best_epoch": best["epoch"], "best_val_loss": best["val_loss"],
            "final": history[-1], "resumes": resumes,
            "train_seconds_this_process": time.perf_counter() - started}


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
