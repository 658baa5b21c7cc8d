"""Prompts to model inputs: the tokenizer, token ids, and the frozen-feature cache.

With LoRA the model reads token ids; in frozen-backbone mode (``model.adapter: none``) the
heads read the backbone's final-layer features, computed once per (backbone, prompts,
max_length, truncation side, precision) and cached on disk under ``$DFIL_CACHE/features``
for every cell, training or evaluation, that needs the same set.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from dataclasses import dataclass, replace

import pandas as pd
import torch

from dfil.atomic import atomic_path
from dfil.cellconfig import CellConfig, to_dict
from dfil.data.prompts import prompt_for
from dfil.engine.batching import Encoded, encode, encode_ids
from dfil.engine.device import autocast_dtype
from dfil.engine.predict import frozen_states
from dfil.methods import method_spec
from dfil.model.backbone import load_tokenizer
from dfil.model.embedded import cache_dir

# Part of every feature-cache key: bump it when what a cached file holds changes.
FEATURE_CACHE_FORMAT = 3


def cell_prompts(cell: CellConfig, texts, task: str | None = None) -> list[str]:
    """The prompts of ``texts`` for the cell's task (or ``task``) and prompt style."""
    return [prompt_for(task or cell.data.task, t, cell.data.prompt) for t in texts]


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


@dataclass(frozen=True)
class Columns:
    """Where a frame keeps what :func:`encode_frame` reads: the text, the gold label and
    the proportion (None: the frame has none), and the task whose prompt wraps the text
    (None: the cell's)."""

    text: str = "text"
    label: str | None = "label"
    p: str | None = "p"
    task: str | None = None


def encode_frame(model, tokenizer: LazyTokenizer, cell: CellConfig, frame: pd.DataFrame,
                 columns: Columns = Columns()) -> Encoded:
    """The prompts of ``frame`` encoded for ``model``: token ids, labels ``[N]``,
    proportions ``[N]``; in frozen-backbone mode also the backbone's features (see
    :func:`frozen_features`)."""
    prompts = cell_prompts(cell, frame[columns.text], columns.task)
    labels = frame[columns.label].to_numpy() if columns.label else None
    p = frame[columns.p].to_numpy() if columns.p and columns.p in frame else None
    if cell.model.adapter != "none":
        return encode(tokenizer(), prompts, labels, p, cell.data.max_length,
                      cell.data.truncation_side)
    return frozen_features(model, tokenizer, cell, prompts, labels, p)


def frozen_features(model, tokenizer: LazyTokenizer, cell: CellConfig, prompts: list[str],
                    labels, p) -> Encoded:
    """Frozen-backbone mode: ``prompts`` with the backbone's pooled features and, for
    attention pooling, its token states, cached on disk per backbone and prompts.

    One pass writes both files (``<key>.safetensors`` with the token ids, their lengths
    before the cut to ``max_length`` and last-token features,
    ``<key>.states.safetensors``), so an attention-pooling cell reuses the pass the other
    cells paid for; a cell reads only the file it needs, and a cell whose feature sets
    are all cached loads neither the backbone nor the tokenizer.
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
            enc = replace(encode_ids(cached["ids"], cached["lengths"], labels, p,
                                     cached["source_lengths"].numpy()),
                          features=cached["features"])
            states = load_file(str(states_path))["states"] if tokens else None
        else:
            enc = encode(tokenizer(), prompts, labels, p, d.max_length, d.truncation_side)
            dtype = autocast_dtype(cell.train.precision, next(model.parameters()).device)
            feats, states = frozen_states(model, enc, tokenizer.pad_id,
                                          cell.train.eval_batch_size, dtype)
            with atomic_path(states_path) as tmp:
                save_file({"states": states}, tmp)
            lengths = torch.tensor([len(x) for x in enc.ids], dtype=torch.int64)
            flat = torch.tensor([t for x in enc.ids for t in x], dtype=torch.int64)
            with atomic_path(path) as tmp:
                save_file({"features": feats, "ids": flat, "lengths": lengths,
                           "source_lengths": torch.from_numpy(enc.source_lengths)}, tmp)
            enc = replace(enc, features=feats)
            states = states if tokens else None
    return replace(enc, states=states)
