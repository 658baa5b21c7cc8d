"""Prompts to model inputs: the tokenizer, token ids, and the frozen-feature cache.

With LoRA the model reads token ids; in frozen-backbone mode (``model.adapter: none``) the
heads read the backbone's final-layer features, computed once per (backbone, prompts,
max_length, truncation side, precision) and cached on disk under ``$DFIL_CACHE/features``
for every cell, training or evaluation, that needs the same set.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import torch

from dfil.config.cell import CellConfig, to_dict
from dfil.core.methods import method_spec
from dfil.data.prompts import prompt_for
from dfil.engine.batching import Encoded, encode, encode_ids
from dfil.engine.control import control_features, proportion_column
from dfil.engine.device import autocast_dtype
from dfil.engine.featuresets import FEATURE_CACHE_FORMAT
from dfil.engine.frames import probe_sets, qure_frame, task_frames
from dfil.engine.inputs import model_digest
from dfil.engine.predict import frozen_states
from dfil.model.backbone import load_tokenizer
from dfil.model.dual_path import build_model
from dfil.model.embedded import cache_dir
from dfil.util.atomic import atomic_path
from dfil.util.errors import MissingInputError
from dfil.util.lock import hold

#: Set to 1 (the DAG's train and evaluate jobs, whose features its frozen_features jobs
#: compute first): a feature set missing from the cache is an error, not computed here.
REQUIRE_CACHED = "DFIL_FEATURES_CACHED"


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
    :func:`frozen_features`), ``[N, d+1]`` with each item's true proportion appended for
    a positive control (:mod:`dfil.engine.control`)."""
    prompts = cell_prompts(cell, frame[columns.text], columns.task)
    labels = frame[columns.label].to_numpy() if columns.label else None
    p = frame[columns.p].to_numpy() if columns.p and columns.p in frame else None
    if cell.model.adapter != "none":
        return encode(tokenizer(), prompts, labels, p, cell.data.max_length,
                      cell.data.truncation_side)
    enc = frozen_features(model, tokenizer, cell, prompts, labels, p)
    if cell.model.heads.control_input != "none":
        true_p = frame[proportion_column(list(frame.columns), columns.text, columns.p)]
        enc = replace(enc, features=control_features(enc.features, true_p.to_numpy(),
                                                     cell.model.heads.control_input))
    return enc


def feature_paths(cell: CellConfig, prompts: list[str]) -> tuple[Path, Path]:
    """Where the cache keeps the features of ``prompts`` for the cell's backbone (its
    config and the digest of its weights' files, :func:`dfil.engine.inputs.model_digest`:
    weights made again differently never meet features of the old ones), prompt length,
    truncation side and precision: the pooled file and the token states' file."""
    d = cell.data
    inputs = [FEATURE_CACHE_FORMAT, to_dict(cell.model.backbone), model_digest(cell),
              d.max_length, d.truncation_side, cell.train.precision, prompts]
    key = hashlib.sha256(json.dumps(inputs).encode()).hexdigest()
    path = cache_dir() / "features" / f"{key[:32]}.safetensors"
    return path, path.with_suffix(".states.safetensors")


def frozen_features(model, tokenizer: LazyTokenizer, cell: CellConfig, prompts: list[str],
                    labels, p) -> Encoded:
    """Frozen-backbone mode: ``prompts`` with the backbone's pooled features and, for
    attention pooling, its token states, cached on disk per backbone and prompts.

    One pass writes both files (``<key>.safetensors`` with the token ids, their lengths
    before the cut to ``max_length`` and last-token features,
    ``<key>.states.safetensors``), so an attention-pooling cell reuses the pass the other
    cells paid for; a cell reads only the file it needs, and a cell whose feature sets
    are all cached loads neither the backbone nor the tokenizer. A set not cached is
    computed here, unless the environment sets :data:`REQUIRE_CACHED` (the DAG's train
    and evaluate jobs: its frozen_features jobs compute every set first).
    """
    tokens = method_spec(cell.model.method).attn_pool
    path, states_path = feature_paths(cell, prompts)
    with _one_writer(path):
        loaded = _load_cached(path, states_path, tokens, labels, p)
        if loaded is not None:
            enc, states = loaded
        else:
            if os.environ.get(REQUIRE_CACHED) == "1":
                raise MissingInputError(
                    f"{path}: the frozen features of {len(prompts)} prompts of cell "
                    f"{cell.name} are not cached; the DAG's frozen_features jobs compute "
                    f"them (`dfil features`), or unset {REQUIRE_CACHED} to compute them here")
            enc, states = _compute(model, tokenizer, cell, prompts, labels, p)
            states = states if tokens else None
    return replace(enc, states=states)


def _load_cached(path: Path, states_path: Path, tokens: bool, labels, p
                 ) -> tuple[Encoded, torch.Tensor | None] | None:
    """The cached feature set at ``path`` (and its token states when ``tokens``); None
    when it is not cached, or when a file of it cannot be read: then both files are
    removed with one line naming the damaged one, and the set is computed again (here,
    or by the DAG's next run: its stamp, naming files now gone, is dropped before the DAG
    is built, :mod:`dfil.preflight.featurestamps`)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not path.is_file() or (tokens and not states_path.is_file()):
        return None
    reading = path
    try:
        cached = load_file(str(path))
        enc = replace(encode_ids(cached["ids"], cached["lengths"], labels, p,
                                 cached["source_lengths"].numpy()),
                      features=cached["features"])
        reading = states_path
        states = load_file(str(states_path))["states"] if tokens else None
    except (SafetensorError, OSError, KeyError, ValueError, RuntimeError) as err:
        print(f"dfil: {reading}: damaged frozen-feature file ({type(err).__name__}: "
              f"{' '.join(str(err).split())[:160]}); removed with its pair, so the set is "
              "computed again", file=sys.stderr)
        path.unlink(missing_ok=True)
        states_path.unlink(missing_ok=True)
        return None
    return enc, states


def _one_writer(path: Path):
    """One process computes a given feature set; concurrent jobs wait for it and then
    read it, instead of all computing the same thing (the lock beside ``path``)."""
    return hold(path.with_suffix(".lock"))


def _compute(model, tokenizer: LazyTokenizer, cell: CellConfig, prompts: list[str],
             labels, p) -> tuple[Encoded, torch.Tensor]:
    """One backbone pass over ``prompts``, written to both cache files (the caller holds
    the lock): the encoded prompts with their pooled features, and every token's states."""
    from safetensors.torch import save_file

    path, states_path = feature_paths(cell, prompts)
    d = cell.data
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
    return replace(enc, features=feats), states


#: The probe lists evaluation scores, by probe set: the columns whose texts it reads
#: (:func:`dfil.evaluate.run._probe_metrics`), each wrapped in FRoG's prompt.
PROBE_TEXTS = {"compositional": ("text",), "csmc": ("text_a", "text_b"),
               "entailment": ("text_i", "text_j"), "ipr": ("text",), "naturalistic": ("text",)}


def item_prompts(cell: CellConfig, item_set: str) -> list[list[str]]:
    """The prompt lists of one of the cell's item sets
    (:data:`dfil.engine.featuresets.ITEM_SETS`), as training and evaluation encode them."""
    if item_set == "probes":
        sets = probe_sets(cell)
        return [cell_prompts(cell, pd.DataFrame(sets[name])[col], "frog")
                for name, cols in PROBE_TEXTS.items() for col in cols]
    if item_set == "qure":
        return [cell_prompts(cell, qure_frame(cell)["text"], "frog")]
    frames = task_frames(cell)
    frame = frames.get("train_pool", frames["train"]) if item_set == "train" else frames[item_set]
    return [cell_prompts(cell, frame["text"])]


def cache_item_set(cell: CellConfig, item_set: str, device) -> dict:
    """Compute (or find cached) the frozen features of the cell's ``item_set``; returns
    what the ``frozen_features`` job's stamp records: the set, its prompt lists' sizes
    and cache files (full paths: preflight drops a stamp whose files are gone,
    :mod:`dfil.preflight.featurestamps`), and how many were computed here."""
    lists = item_prompts(cell, item_set)
    model = tokenizer = None
    computed = 0
    for prompts in lists:
        path, states_path = feature_paths(cell, prompts)
        with _one_writer(path):
            if path.is_file() and states_path.is_file():
                continue
            if model is None:
                model = build_model(cell.model, seed=cell.train.seed, backbone=False).to(device)
                tokenizer = LazyTokenizer(cell.model.backbone)
            _compute(model, tokenizer, cell, prompts, None, None)
            computed += 1
    return {"item_set": item_set, "backbone": cell.model.backbone.name,
            "prompts": [len(prompts) for prompts in lists], "computed": computed,
            "files": [str(f) for prompts in lists for f in feature_paths(cell, prompts)]}
