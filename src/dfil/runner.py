"""One cell end to end: its data, its training attempts, its evaluation, its run directory.

Run directory (DESIGN "Results and provenance"): ``cell.yaml``, ``model.safetensors`` (best
by validation loss), ``train_log.jsonl``, ``train_summary.json``, then after evaluation
``metrics.json``, ``predictions.parquet`` and ``mf.json``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

from dfil.atomic import atomic_path, atomic_write_bytes, atomic_write_json
from dfil.backbones import cache_dir
from dfil.batching import Encoded, encode, encode_ids
from dfil.cell import CellConfig, dump_cell, load_cell
from dfil.checkpoint import CheckpointError, load_into, read_checkpoint
from dfil.config import ConfigError, config_hash, to_dict
from dfil.data import few_shot_subset, load_frog, load_sst5, load_sts22, split_train_val
from dfil.data.frog import frog_test_source
from dfil.data.ordinal import label_proportion
from dfil.data.prompts import prompt_for
from dfil.data.splits import check_test_disjoint
from dfil.data.synthetic import ordinal_standin_records
from dfil.model import build_model, load_tokenizer, method_spec
from dfil.predict import frozen_states
from dfil.provenance import provenance
from dfil.train import (
    BEST,
    RESUME,
    TrainData,
    autocast_dtype,
    needs_remediation,
    remediated,
    train_attempt,
)

SUMMARY = "train_summary.json"
# Part of every feature-cache key: bump it when what a cached file holds changes.
FEATURE_CACHE_FORMAT = 2
FROZEN_NOTE = ("frozen backbone: heads trained on cached final-layer features (last token; "
               "every token for attention pooling), no LoRA")


def task_frames(cell: CellConfig) -> dict[str, pd.DataFrame]:
    """train / val / test frames (columns text, label, p, id) of the cell's task.

    A few-shot cell's ``train`` is a subset of ``train_pool`` (also returned), at rows
    ``train["pool_row"]``.
    """
    d = cell.data
    if d.task == "frog":
        easy = load_frog(d.source, "easy", d.frog_task).rename(columns={"question": "text"})
        train, val = split_train_val(easy, d.train_frac, d.split_seed)
        test = load_frog(frog_test_source(d.source, d.test_source), "hard",
                         d.frog_task).rename(columns={"question": "text"})
    elif d.task == "ordinal_standin":
        rows = pd.DataFrame(ordinal_standin_records(1500, d.split_seed))
        rows["p"] = label_proportion(rows["label"], 5)
        pool, test = rows.iloc[:1000], rows.iloc[1000:].reset_index(drop=True)
        train, val = split_train_val(pool.reset_index(drop=True), d.train_frac, d.split_seed)
    else:
        loader = load_sst5 if d.task == "sst5" else load_sts22
        if not d.test_source:
            raise ConfigError(f"data.test_source: task {d.task} needs a test file or split")
        pool = loader(d.source, "train")
        train, val = split_train_val(pool, d.train_frac, d.split_seed)
        test = loader(d.test_source, "test")
    check_test_disjoint({"train": train, "val": val, "test": test}, d.allowed_test_overlap)
    train_pool = None
    if d.budget is not None:
        seed = cell.train.seed if d.fewshot_seed is None else d.fewshot_seed
        train_pool = train.reset_index(drop=True)
        train = few_shot_subset(train_pool, d.budget, seed, d.fewshot_min_per_class)
        train = train.assign(pool_row=train.index)
    frames = {"train": train, "val": val, "test": test}
    if d.max_examples:
        frames = {k: v.iloc[: d.max_examples] for k, v in frames.items()}
    if train_pool is not None:
        frames["train_pool"] = train_pool
    return {k: v.reset_index(drop=True) for k, v in frames.items()}


class LazyTokenizer:
    """The backbone's tokenizer, loaded on the first call: a frozen-backbone job whose
    feature sets are cached never needs it (transformers' import and the tokenizer's
    construction are ~5 s of every such job)."""

    def __init__(self, spec):
        self.spec, self._tokenizer = spec, None

    def __call__(self):
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.spec)
        return self._tokenizer

    @property
    def pad_id(self) -> int:
        return self().pad_token_id


def encode_frame(model, tokenizer: LazyTokenizer, cell: CellConfig, frame: pd.DataFrame,
                 task: str | None = None, text_col: str = "text",
                 label_col: str | None = "label", p_col: str | None = "p") -> Encoded:
    """The prompts of ``frame`` encoded for ``model``: token ids, labels ``[N]``,
    proportions ``[N]``; in frozen-backbone mode also the backbone's features (see
    :func:`frozen_features`)."""
    prompts = [prompt_for(task or cell.data.task, t, cell.data.prompt) for t in frame[text_col]]
    labels = frame[label_col].to_numpy() if label_col else None
    p = frame[p_col].to_numpy() if p_col and p_col in frame else None
    if cell.model.adapter != "none":
        return encode(tokenizer(), prompts, labels, p, cell.data.max_length,
                      cell.data.truncation_side)
    return frozen_features(model, tokenizer, cell, prompts, labels, p)


def frozen_features(model, tokenizer: LazyTokenizer, cell: CellConfig, prompts: list[str],
                    labels, p) -> Encoded:
    """Frozen-backbone mode: ``prompts`` with the backbone's pooled features and, for
    attention pooling, its token states, cached on disk per backbone and prompts.

    One pass writes both files (``<key>.safetensors`` with the token ids and last-token
    features, ``<key>.states.safetensors``), so an attention-pooling cell reuses the pass
    the other cells paid for; a cell reads only the file it needs, and a cell whose
    feature sets are all cached loads neither the backbone nor the tokenizer.
    """
    d = cell.data
    tokens = method_spec(cell.model.method).attn_pool
    inputs = [FEATURE_CACHE_FORMAT, to_dict(cell.model.backbone), d.max_length,
              d.truncation_side, cell.train.precision, prompts]
    key = hashlib.sha256(json.dumps(inputs).encode()).hexdigest()
    path = cache_dir() / "features" / f"{key[:32]}.safetensors"
    states_path = path.with_suffix(".states.safetensors")
    from safetensors.torch import load_file, save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    # One process computes a given feature set; concurrent jobs (Snakemake runs cells in
    # parallel) wait for it and then read it, instead of all computing the same thing.
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file() and (states_path.is_file() or not tokens):
            cached = load_file(str(path))
            enc = replace(encode_ids(cached["ids"], cached["lengths"], labels, p),
                          features=cached["features"])
            states = load_file(str(states_path))["states"] if tokens else None
        else:
            enc = encode(tokenizer(), prompts, labels, p, d.max_length, d.truncation_side)
            dtype = autocast_dtype(cell, next(model.parameters()).device)
            feats, states = frozen_states(model, enc, tokenizer.pad_id,
                                          cell.train.eval_batch_size, dtype)
            with atomic_path(states_path) as tmp:
                save_file({"states": states}, tmp)
            lengths = torch.tensor([len(x) for x in enc.ids], dtype=torch.int64)
            flat = torch.tensor([t for x in enc.ids for t in x], dtype=torch.int64)
            with atomic_path(path) as tmp:
                save_file({"features": feats, "ids": flat, "lengths": lengths}, tmp)
            enc = replace(enc, features=feats)
            states = states if tokens else None
    return replace(enc, states=states)


def _write_cell(run_dir: Path, cell: CellConfig) -> None:
    text = dump_cell(cell)
    existing = run_dir / "cell.yaml"
    if existing.is_file() and existing.read_text() != text and (run_dir / RESUME).exists():
        raise ConfigError(f"{existing}: differs from the cell being trained, and {RESUME} "
                          "belongs to the old one; use a fresh run directory")
    atomic_write_bytes(existing, text.encode())


def train_cell(cell_path: str | Path, run_dir: str | Path, log=print) -> dict:
    """Train the cell at ``cell_path`` into ``run_dir`` (resuming if it was interrupted)."""
    started = time.perf_counter()
    cell = load_cell(cell_path)
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    _write_cell(run_dir, cell)
    spec = method_spec(cell.model.method)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    summary = {"cell": cell.name, "config_hash": config_hash(cell), "method": spec.name,
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
                attempt_cell = remediated(cell)
                log(f"MF accuracy {attempts_done[0]['final'].get('val_acc_mf'):.3f} is below "
                    f"{cell.train.collapse_threshold}: retraining with stop-gradient on p")
            if len(attempts_done) >= attempt:
                continue
            # Frozen mode builds the heads alone; the backbone is loaded only if a
            # feature set is not cached yet (frozen_features).
            frozen = cell.model.adapter == "none"
            model = build_model(attempt_cell.model, seed=cell.train.seed,
                                backbone=not frozen).to(device)
            if frozen and "train_pool" in frames:
                # A few-shot subset's features are rows of its pool's: one backbone pass
                # serves every budget and seed drawn from that pool.
                train = encode_frame(model, tokenizer, cell, frames["train_pool"]).take(
                    frames["train"]["pool_row"])
            else:
                train = encode_frame(model, tokenizer, cell, frames["train"])
            data = TrainData(train=train, val=encode_frame(model, tokenizer, cell, frames["val"]),
                             pad_id=None if frozen else tokenizer.pad_id)
            result = train_attempt(model, attempt_cell, data, run_dir, attempt, log)
            if attempt == 1 and needs_remediation(result, cell):
                shutil.copyfile(run_dir / BEST, run_dir / "attempt1_model.safetensors")
            attempts_done.append(result)
            atomic_write_json(run_dir / "attempts.json", attempts_done)
            (run_dir / RESUME).unlink(missing_ok=True)
        summary["attempts"] = attempts_done
        summary["remediated"] = len(attempts_done) > 1
        summary["trained"] = True
        summary["train_examples"] = len(frames["train"])
    summary["provenance"] = provenance(device, time.perf_counter() - started)
    atomic_write_json(run_dir / SUMMARY, summary)
    return summary


def _attempts_so_far(run_dir: Path) -> list[dict]:
    path = run_dir / "attempts.json"
    return json.loads(path.read_text()) if path.is_file() else []


def load_trained(run_dir: Path, device):
    """Model of a run directory's best checkpoint, checked against its cell."""
    cell = load_cell(run_dir / "cell.yaml")
    config, tensors, _ = read_checkpoint(run_dir / BEST)
    if config.method != cell.model.method:
        raise CheckpointError(f"{run_dir / BEST}: method {config.method} != cell's")
    model = build_model(config, backbone=config.adapter != "none").to(device)
    load_into(model, tensors, run_dir / BEST)
    return cell, model
