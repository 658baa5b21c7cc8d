"""Batched forward passes of a dual-path model over encoded prompts: a training or
validation batch, the frozen backbone's states, and predictions of every path."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dfil.engine.batching import Encoded, collate, collate_packed, collate_states, targets
from dfil.engine.device import autocast, progress
from dfil.inference import softmax
from dfil.model.backbone import hidden_size
from dfil.model.dual_path import main_class_probs


@dataclass
class Predictions:
    """Per-example outputs; a path the method lacks is None.

    main_probs ``[N, Q]``, p ``[N]``, mf_scores ``[N, Q]`` (memberships or no-MF logits).
    """

    main_probs: np.ndarray | None
    p: np.ndarray | None
    mf_scores: np.ndarray | None

    @property
    def mf_probs(self) -> np.ndarray | None:
        """softmax of the MF scores (note R-mf-probs)."""
        return None if self.mf_scores is None else softmax(self.mf_scores)


def forward_batch(model, enc: Encoded, index, pad_id: int | None, device,
                  packed: bool = False):
    """Head outputs, labels ``[B]`` and proportions ``[B]`` for rows ``index`` of ``enc``:
    through the backbone (padded, or padding-free when ``packed``), or straight from cached
    features in frozen-backbone mode (``pad_id`` unused, may be None)."""
    if packed and enc.features is None and model.heads.attn is None:
        ids, positions, last, y, p = collate_packed(enc, index, device)
        return model.forward_packed(ids, positions, last), y, p
    if enc.features is not None:
        h = enc.features[torch.as_tensor(np.asarray(index))].to(device)
        if model.heads.attn is None:
            out = model.heads(h)
        else:
            out = model.heads(h, *collate_states(enc, index, device))
        return (out, *targets(enc, index, device))
    ids, mask, y, p = collate(enc, index, pad_id, device)
    return model(ids, mask), y, p


@torch.no_grad()
def frozen_states(model, enc: Encoded, pad_id: int, batch_size: int = 32,
                  autocast_dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The frozen backbone's final-layer states of every prompt of ``enc``, in one pass:
    last-token states ``[N, d]`` (the pooled features) and every token's ``[sum_i T_i, d]``
    (prompt i's at rows ``enc.offsets()[i]:...[i + 1]``, for attention pooling), under
    ``autocast_dtype`` autocast when given."""
    model.eval()
    device = next(model.parameters()).device
    order = np.argsort([len(x) for x in enc.ids], kind="stable")
    offsets = enc.offsets()
    d = hidden_size(model.attach_backbone())
    tokens = torch.empty(int(offsets[-1]), d)
    for start in progress(range(0, len(enc), batch_size), desc=f"features {len(enc)} examples"):
        chunk = order[start:start + batch_size]
        ids, mask, _, _ = collate(enc, chunk, pad_id, device)
        with autocast(device, autocast_dtype):
            states = model.encode(ids, mask)
        states = states.float().cpu()
        for j, i in enumerate(chunk):
            tokens[offsets[i]:offsets[i + 1]] = states[j, : offsets[i + 1] - offsets[i]]
    # Right padding: each prompt's last real token is the last of its rows.
    return tokens[torch.as_tensor(offsets[1:] - 1)].clone(), tokens


@torch.no_grad()
def predict(model, enc: Encoded, pad_id: int | None, batch_size: int = 32,
            autocast_dtype: torch.dtype | None = None, order: str = "length") -> Predictions:
    """Run ``model`` over ``enc`` in batches (sorted by length to cut padding)."""
    model.eval()
    device = next(model.parameters()).device
    n = len(enc)
    lengths = np.array([len(x) for x in enc.ids])
    idx = np.argsort(lengths, kind="stable") if order == "length" else np.arange(n)
    parts: dict[str, list[np.ndarray]] = {"main": [], "p": [], "mf": []}
    spec = model.heads.spec
    for start in progress(range(0, n, batch_size), desc=f"predict {n} examples"):
        chunk = idx[start:start + batch_size]
        with autocast(device, autocast_dtype):
            out, _, _ = forward_batch(model, enc, chunk, pad_id, device)
        probs = main_class_probs(out, spec)
        for key, value in (("main", probs), ("p", out.p), ("mf", out.mf_scores)):
            if value is not None:
                parts[key].append(value.float().cpu().numpy())
    inverse = np.empty(n, dtype=np.int64)
    inverse[idx] = np.arange(n)

    def gather(key):
        return np.concatenate(parts[key])[inverse] if parts[key] else None

    return Predictions(main_probs=gather("main"), p=gather("p"), mf_scores=gather("mf"))


def heads_centers(heads) -> np.ndarray | None:
    """The heads' MF centers as numpy ``[Q]`` float64, or None (no Gaussian MF)."""
    c = heads.centers()
    return None if c is None else c.detach().cpu().double().numpy()


def heads_widths(heads) -> np.ndarray | None:
    """The heads' MF widths as numpy ``[Q]`` float64, or None (no Gaussian MF)."""
    mf = heads.mf
    return mf.widths().detach().cpu().double().numpy() if hasattr(mf, "widths") else None
