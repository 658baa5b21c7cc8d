"""Training one cell (App. C.1 recipe), preemptible and deterministic.

A linear loop with small named helpers. The run directory holds the best checkpoint by
validation loss (``model.safetensors``), ``train_log.jsonl`` (one record per epoch) and,
while training, ``resume.pt``: the trained tensors, optimizer, scheduler, RNG state and
position (epoch, step). It is written at every epoch end and when SIGTERM or SIGUSR1
arrives (what SLURM sends before it kills a job), so rerunning the same command continues
exactly where the run stopped and ends with the same numbers as an uninterrupted run.
"""

from __future__ import annotations

import math
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import torch

from dfil.atomic import atomic_path, atomic_write_bytes
from dfil.batching import Encoded, batches, epoch_order
from dfil.cell import CellConfig
from dfil.checkpoint import CheckpointError, load_into, save_checkpoint, trained_state
from dfil.config import config_hash
from dfil.data.io import dumps_jsonl
from dfil.evaluate import mf_labels
from dfil.model import compute_loss
from dfil.model.losses import inverse_frequency_weights
from dfil.predict import forward_batch, predict, progress

RESUME = "resume.pt"
BEST = "model.safetensors"
LOG = "train_log.jsonl"


class Preempted(RuntimeError):
    """Training stopped on SIGTERM/SIGUSR1 after saving its resume state."""


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


def autocast_dtype(cell: CellConfig, device: torch.device) -> torch.dtype | None:
    """bf16 autocast on CUDA by default (the paper's H200 runs), fp32 on CPU."""
    mode = cell.train.precision
    if mode == "bf16" or (mode == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return None


class _StopFlag:
    """Installs SIGTERM/SIGUSR1 handlers that only raise a flag, checked between steps."""

    signals = (signal.SIGTERM, signal.SIGUSR1)

    def __enter__(self):
        self.raised = None
        self.previous = {s: signal.signal(s, self._handle) for s in self.signals}
        return self

    def _handle(self, signum, frame):
        self.raised = signal.Signals(signum).name

    def __exit__(self, *exc):
        for s, handler in self.previous.items():
            signal.signal(s, handler)
        return False


def load_resume(path: Path, expected_hash: str) -> dict | None:
    """The resume state at ``path`` or None; a damaged file is an error, never a restart."""
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for truncated pickles/zips
        raise CheckpointError(
            f"{path}: resume checkpoint is corrupt or truncated ({type(err).__name__}: {err}); "
            "delete it to start this run from scratch"
        ) from err
    if not isinstance(state, dict) or state.get("format") != "dfil-resume/1":
        raise CheckpointError(f"{path}: not a dfil resume checkpoint")
    if state["config_hash"] != expected_hash:
        raise CheckpointError(
            f"{path}: written for config {state['config_hash']}, this cell is {expected_hash}; "
            "delete it or use the original cell.yaml"
        )
    return state


def _save_resume(path: Path, state: dict) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def _validate(model, cell, data: TrainData, weights, device, dtype) -> dict:
    """Validation loss (same weighted loss as training) and accuracies of each path."""
    spec = model.heads.spec
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for index in batches(np.arange(len(data.val)), cell.train.eval_batch_size):
            with torch.autocast(device.type, dtype=dtype or torch.float32,
                                enabled=dtype is not None):
                out, y, p = forward_batch(model, data.val, index, data.pad_id, device)
            terms = compute_loss(out, y, p, spec, cell.model.loss, weights)
            total += float(terms.total) * len(index)
            n += len(index)
    preds = predict(model, data.val, data.pad_id, cell.train.eval_batch_size, dtype)
    result = {"val_loss": total / n}
    if preds.main_probs is not None:
        result["val_acc_main"] = float((preds.main_probs.argmax(1) == data.val.labels).mean())
    mf = mf_labels(preds, heads_centers(model.heads))
    if mf is not None:
        result["val_acc_mf"] = float((mf == data.val.labels).mean())
    return result


def train_attempt(model, cell: CellConfig, data: TrainData, run_dir: Path, attempt: int,
                  log=print) -> dict:
    """Train ``model`` in place for one attempt; returns its summary. Raises Preempted."""
    run_dir = Path(run_dir)
    device = next(model.parameters()).device
    dtype = autocast_dtype(cell, device)
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
    with _StopFlag() as stop:
        while epoch < cfg.epochs:
            model.train()
            plan = batches(epoch_order(n_train, cfg.seed, epoch), cfg.batch_size)
            running = {k: v.to(device) for k, v in sums.items()}
            bar = progress(range(step, len(plan)), total=len(plan), initial=step,
                           desc=f"attempt {attempt} epoch {epoch + 1}/{cfg.epochs}")
            for s in bar:
                with torch.autocast(device.type, dtype=dtype or torch.float32,
                                    enabled=dtype is not None):
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
                    _save_resume(run_dir / RESUME, snapshot(epoch, s + 1, done))
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
            _save_resume(run_dir / RESUME, snapshot(epoch, 0, {}))
            atomic_write_bytes(run_dir / LOG, dumps_jsonl(history))
            log(_epoch_line(record))
    return {"attempt": attempt, "stop_grad_p": cell.model.loss.stop_grad_p,
            "best_epoch": best["epoch"], "best_val_loss": best["val_loss"],
            "final": history[-1], "train_seconds_this_process": time.perf_counter() - started}


def heads_centers(heads) -> np.ndarray | None:
    """The heads' MF centers as numpy ``[Q]``, or None (no Gaussian MF)."""
    c = heads.centers()
    return None if c is None else c.detach().cpu().double().numpy()


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


def needs_remediation(summary: dict, cell: CellConfig) -> bool:
    """App. D.2: an MF branch ending below the threshold is retrained with stop-gradient."""
    acc = summary["final"].get("val_acc_mf")
    return (acc is not None and cell.train.collapse_threshold > 0
            and not cell.model.loss.stop_grad_p and acc < cell.train.collapse_threshold)


def remediated(cell: CellConfig) -> CellConfig:
    loss = replace(cell.model.loss, stop_grad_p=True)
    return replace(cell, model=replace(cell.model, loss=loss))
