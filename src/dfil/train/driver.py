"""Training one cell into its run directory: the attempts, with collapse remediation.

Writes ``cell.yaml``, then per attempt the loop's outputs (:mod:`dfil.train.loop`) and
``attempts.json``; when every attempt is done, ``train_summary.json``. An MF branch that
collapses (App. D.2) is retrained once with stop-gradient on p. File names:
:mod:`dfil.contracts.rundir`.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from dfil.atomic import atomic_write_bytes, atomic_write_json
from dfil.cellconfig import CellConfig, config_hash, dump_cell, load_cell, with_stop_grad_p
from dfil.contracts.rundir import ATTEMPTS, BEST, CELL, RESUME, SUMMARY
from dfil.engine.checkpoint import read_checkpoint
from dfil.engine.device import deterministic, pick_device
from dfil.engine.features import LazyTokenizer, encode_frame
from dfil.engine.frames import task_frames
from dfil.errors import CheckpointError
from dfil.methods import method_spec
from dfil.model.attention import describe as describe_attention
from dfil.model.dual_path import build_model
from dfil.provenance import provenance
from dfil.train.loop import TrainData, train_attempt
from dfil.train.superseded import supersede, trained_for

FROZEN_NOTE = ("frozen backbone: heads trained on cached final-layer features (last token; "
               "every token for attention pooling), no LoRA")


def _prepare(run_dir: Path, cell: CellConfig, chash: str, log) -> None:
    """Write the cell's ``cell.yaml``, first moving aside outputs made for another config."""
    old = trained_for(run_dir)
    if old is not None and old != chash:
        moved = supersede(run_dir, old)
        log(f"{run_dir}: its outputs were trained for config {old}, this cell is {chash}: "
            f"moved them to {moved} and training afresh")
    atomic_write_bytes(run_dir / CELL, dump_cell(cell).encode())


def train_cell(cell_path: str | Path, run_dir: str | Path, log=print) -> dict:
    """Train the cell at ``cell_path`` into ``run_dir`` (resuming if it was interrupted)."""
    started = time.perf_counter()
    cell = load_cell(cell_path)
    with deterministic(cell.train.deterministic):  # before any CUDA work
        return _train(cell, Path(run_dir), started, log)


def _train(cell: CellConfig, run_dir: Path, started: float, log) -> dict:
    run_dir.mkdir(parents=True, exist_ok=True)
    chash = config_hash(cell)
    _prepare(run_dir, cell, chash, log)
    spec = method_spec(cell.model.method)
    device = pick_device()
    summary = {"cell": cell.name, "config_hash": chash, "method": spec.name,
               "frozen_backbone": cell.model.adapter == "none", "attempts": []}
    if cell.model.adapter == "none":
        summary["note"] = FROZEN_NOTE
    if cell.data.standin:
        summary["data_note"] = "synthetic stand-in data, not the paper's dataset"
    if not spec.trains:
        summary["trained"] = False
    else:
        frames = task_frames(cell)
        tokenizer = LazyTokenizer(cell.model.backbone)
        attempts_done = _attempts_so_far(run_dir)
        if attempts_done:  # a run counts as trained only with an intact checkpoint
            try:
                read_checkpoint(run_dir / BEST)
            except CheckpointError as err:
                raise CheckpointError(f"{err}; the run is not trained after all: delete "
                                      f"{run_dir} and run dfil train again") from None
        attempt_cell = cell
        for attempt in (1, 2):
            if attempt == 2:
                if not needs_remediation(attempts_done[0], cell):
                    break
                attempt_cell = with_stop_grad_p(cell)
                log(f"MF accuracy {attempts_done[0]['final'].get('val_acc_mf'):.3f} is below "
                    f"{cell.train.collapse_threshold}: retraining with stop-gradient on p")
            if len(attempts_done) >= attempt:
                continue
            # Frozen mode builds the heads alone; the backbone is loaded only if a
            # feature set is not cached yet (frozen_features).
            frozen = cell.model.adapter == "none"
            model = build_model(attempt_cell.model, seed=cell.train.seed,
                                backbone=not frozen).to(device)
            if not frozen:
                log("backbone " + describe_attention(cell.model.backbone.attn_implementation,
                                                     model.backbone))
            if frozen and "train_pool" in frames:
                # A few-shot subset's features are rows of its pool's: one backbone pass
                # serves every budget and seed drawn from that pool.
                pool = encode_frame(model, tokenizer, cell, frames["train_pool"])
                train = pool.take(frames["train"]["pool_row"])
            else:
                pool = train = encode_frame(model, tokenizer, cell, frames["train"])
            data = TrainData(train=train, val=encode_frame(model, tokenizer, cell, frames["val"]),
                             pad_id=None if frozen else tokenizer.pad_id)
            if frozen:  # heads.feature_norm: statistics of the training pool's features
                model.heads.fit_feature_norm(pool.features, pool.states)
            result = train_attempt(model, attempt_cell, data, run_dir, attempt, log)
            if attempt == 1 and needs_remediation(result, cell):
                shutil.copyfile(run_dir / BEST, run_dir / "attempt1_model.safetensors")
            attempts_done.append({**result, "config_hash": chash})
            atomic_write_json(run_dir / ATTEMPTS, attempts_done)
            (run_dir / RESUME).unlink(missing_ok=True)
        summary["attempts"] = attempts_done
        summary["remediated"] = len(attempts_done) > 1
        summary["trained"] = True
        summary["train_examples"] = len(frames["train"])
    summary["provenance"] = provenance(device, time.perf_counter() - started)
    atomic_write_json(run_dir / SUMMARY, summary)
    return summary


def _attempts_so_far(run_dir: Path) -> list[dict]:
    path = run_dir / ATTEMPTS
    return json.loads(path.read_text()) if path.is_file() else []


def needs_remediation(summary: dict, cell: CellConfig) -> bool:
    """App. D.2: an MF branch ending below the threshold is retrained with stop-gradient."""
    acc = summary["final"].get("val_acc_mf")
    return (acc is not None and cell.train.collapse_threshold > 0
            and not cell.model.loss.stop_grad_p and acc < cell.train.collapse_threshold)

