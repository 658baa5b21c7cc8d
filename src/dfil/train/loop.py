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
from dfil.cell import CellConfig
from dfil.config import config_hash
from dfil.contracts.rundir import BEST, LOG, RESUME
from dfil.data.io import dumps_jsonl
from dfil.engine.batching import Encoded, batches, epoch_order
from dfil.engine.checkpoint import load_into, save_checkpoint, trained_state
from dfil.engine.device import autocast, autocast_dtype, progress
from dfil.engine.predict import forward_batch, heads_centers, predict
from dfil.inference import mf_labels
from dfil.model.dual_path import compute_loss
from dfil.model.losses import inverse_frequency_weights
from dfil.train.resume import Preempted, StopFlag, load_resume, save_resume


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
    """Three groups (App. C.1): LoRA 2e-5, heads 1e-3, MF 1e-2; frozen tensors left out."""
    groups = {"lora": [], "heads": [], "mf": []}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        key = "mf" if name.startswith("heads.mf.") else "heads" if name.startswith(
            "heads.") else "lora"
        groups[key].append(param)
    lrs = {"lora": cell.train.lr_lora, "heads": cell.train.lr_heads, "mf": cell.train.lr_mf}
    return [{"params": ps, "lr": lrs[k], "name": k} for k, ps in groups.items() if ps]


def _validate(model, cell, data: TrainData, weights, device, dtype) -> dict:
    """Validation loss (same weighted loss as training) and accuracies of each path."""
    spec = model.heads.spec
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for index in batches(np.arange(len(data.val)), cell.train.eval_batch_size):
            with autocast(device, dtype):
                out, y, p = forward_batch(model, data.val, index, data.pad_id, device)
            terms = compute_loss(out, y, p, spec, cell.model.loss, weights)
            total += float(terms.total) * len(index)
            n += len(index)
    preds = predict(model, data.val, data.pad_id, cell.train.eval_batch_size, dtype)
    result = {"val_loss": total / n}
    if preds.main_probs is not None:
        result["val_acc_main"] = float((preds.main_probs.argmax(1) == data.val.labels).mean())
    mf = mf_labels(preds.p, preds.mf_scores, heads_centers(model.heads))
    if mf is not None:
        result["val_acc_mf"] = float((mf == data.val.labels).mean())
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
    # foreach: one multi-tensor update per step (the CUDA default; on the CPU it is ~3x
    # faster than the per-tensor loop for a heads-only model's many small tensors).
    optimizer = torch.optim.AdamW(param_groups(model, cell), betas=tuple(cfg.betas),
                                  eps=cfg.adam_eps, weight_decay=cfg.weight_decay,
                                  foreach=True)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: lr_factor(s, total, warmup))
    weights = None
    if cell.model.loss.class_weights == "inverse_frequency":
        weights = inverse_frequency_weights(torch.from_numpy(data.train.labels),
                                            cell.model.num_classes).to(device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    chash = config_hash(cell)
    state = load_resume(run_dir / RESUME, chash)
    if state is not None and state["attempt"] == attempt:
        load_into(model, state["trained"], run_dir / RESUME)
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["rng"])
        epoch, step = state["epoch"], state["step"]
        history, best = state["history"], state["best"]
        sums = state["sums"]
        log(f"resuming attempt {attempt} at epoch {epoch + 1}, step {step}")
    else:
        epoch, step, history, sums = 0, 0, [], {}
        best = {"val_loss": float("inf"), "epoch": -1}

    def snapshot(next_epoch: int, next_step: int, running: dict) -> dict:
        return {"format": "dfil-resume/1", "config_hash": chash, "attempt": attempt,
                "epoch": next_epoch, "step": next_step, "trained": trained_state(model),
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "rng": torch.get_rng_state(), "history": history, "best": best,
                "sums": running}

    started = time.perf_counter()
    with StopFlag() as stop:
        while epoch < cfg.epochs:
            model.train()
            plan = batches(epoch_order(n_train, cfg.seed, epoch), cfg.batch_size)
            running = {k: v.to(device) for k, v in sums.items()}
            bar = progress(range(step, len(plan)), total=len(plan), initial=step,
                           desc=f"attempt {attempt} epoch {epoch + 1}/{cfg.epochs}")
            for s in bar:
                with autocast(device, dtype):
                    out, y, p = forward_batch(model, data.train, plan[s], data.pad_id, device,
                                              packed=cfg.packing)
                terms = compute_loss(out, y, p, spec, cell.model.loss, weights)
                terms.total.backward()
                torch.nn.utils.clip_grad_norm_(trainable, cfg.grad_clip)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                for k, v in vars(terms).items():  # stays on device: no per-step host sync
                    running[k] = running.get(k, 0.0) + v.detach() * len(plan[s])
                if stop.raised:
                    done = {k: v.detach().cpu() for k, v in running.items()}
                    save_resume(run_dir / RESUME, snapshot(epoch, s + 1, done))
                    raise Preempted(f"{stop.raised} at epoch {epoch + 1}, step {s + 1}; "
                                    f"state saved to {run_dir / RESUME}")
            record = {"attempt": attempt, "epoch": epoch + 1}
            record.update({f"train_{k}": float(v) / n_train for k, v in running.items()})
            record.update(_validate(model, cell, data, weights, device, dtype))
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
            "final": history[-1], "train_seconds_this_process": time.perf_counter() - started}


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
