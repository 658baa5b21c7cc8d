"""Batched forward passes of a dual-path model over encoded prompts: a training or
validation batch, the frozen backbone's states, and predictions of every path.

Outputs stay on the device until a pass is over and come to the host in one transfer,
so a pass has no per-batch host synchronisation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from dfil.core.inference import softmax
from dfil.engine.batching import Encoded, batches, padded, token_rows
from dfil.engine.device import autocast, progress, sync_guard
from dfil.engine.loader import Batch, Loader, to_device
from dfil.model.attention import takes_varlen
from dfil.model.backbone import hidden_size
from dfil.model.objective import main_class_probs, rank_labels
from dfil.util.errors import ConfigError


@dataclass
class Predictions:
    """Per-example outputs; a path the method lacks is None.

    main_probs ``[N, Q]``, p ``[N]``, mf_scores ``[N, Q]`` (memberships or no-MF logits);
    main_pred ``[N]``: the main path's labels by its own rule where that is not the argmax
    of main_probs (CORAL/CORN rank decoding, note R-ordinal).
    """

    main_probs: np.ndarray | None
    p: np.ndarray | None
    mf_scores: np.ndarray | None
    main_pred: np.ndarray | None = None

    @property
    def main_labels(self) -> np.ndarray | None:
        """Main-path labels ``[N]``: main_pred, else the argmax of main_probs."""
        if self.main_pred is not None:
            return self.main_pred
        return None if self.main_probs is None else self.main_probs.argmax(axis=1)

    @property
    def mf_probs(self) -> np.ndarray | None:
        """softmax of the MF scores (note R-mf-probs)."""
        return None if self.mf_scores is None else softmax(self.mf_scores)


def layout_for(model, enc: Encoded, batching: str = "padded") -> str:
    """The batch layout of ``enc`` for ``model``: cached features in frozen-backbone mode;
    else packed when ``batching`` is "packed", or "auto" and the backbone's attention
    takes ``cu_seq_lens`` (attention pooling always pads); else padded."""
    if enc.features is not None:
        return "features"
    if batching not in ("auto", "packed", "padded"):
        raise ValueError(f"unknown batching {batching!r}; expected auto, packed or padded")
    if batching == "padded" or model.pools_attention:
        return "padded"
    varlen = takes_varlen(model.attach_backbone())
    if batching == "packed" and not varlen:
        raise ConfigError("train.batching: packed needs an attention that takes cu_seq_lens "
                         "(flash_attention_2/3); this backbone runs "
                         f"{model.backbone.config._attn_implementation}: use auto or padded")
    return "packed" if varlen else "padded"


def forward_batch(model, batch: Batch):
    """Head outputs for one device :class:`Batch` of any layout."""
    if batch.features is not None:
        if model.heads.attn is None:
            return model.heads(batch.features)
        return model.heads(batch.features, batch.states, batch.attention_mask)
    if batch.cu_seq_lens is not None:
        return model.forward_packed(batch.input_ids, batch.position_ids, batch.last,
                                    batch.cu_seq_lens, batch.max_length)
    return model.forward_padded(batch.input_ids, batch.attention_mask, batch.last)


def outputs(model, loader: Loader, plan, autocast_dtype: torch.dtype | None = None,
            desc: str = "") -> Iterable[tuple[Batch, object]]:
    """(batch, head outputs) of every batch of ``plan``, in eval mode, without gradients;
    from the second batch on, host syncs are reported (:class:`SyncGuard`)."""
    model.eval()
    with torch.no_grad(), sync_guard() as guard:
        for batch in progress(loader(plan), total=len(plan), desc=desc):
            with autocast(loader.device, autocast_dtype):
                out = forward_batch(model, batch)
            yield batch, out
            guard.arm()


class Collector:
    """Main-path probabilities (and CORAL/CORN rank labels), p and MF scores of successive
    batches, kept on the device and brought to the host as one :class:`Predictions`."""

    def __init__(self, spec):
        self.spec = spec
        self.parts: dict[str, list[torch.Tensor]] = {"main": [], "p": [], "mf": [],
                                                     "pred": []}

    def add(self, out) -> None:
        probs = main_class_probs(out, self.spec)
        ranks = rank_labels(out, self.spec)
        for key, value in (("main", probs), ("p", out.p), ("mf", out.mf_scores)):
            if value is not None:
                self.parts[key].append(value.detach().float())
        if ranks is not None:
            self.parts["pred"].append(ranks.detach())

    def result(self, order: np.ndarray | None = None) -> Predictions:
        """The predictions, rows put back in place: row ``order[k]`` was the k-th seen."""
        def gather(key):
            if not self.parts[key]:
                return None
            values = torch.cat(self.parts[key]).cpu().numpy()
            if order is None:
                return values
            out = np.empty_like(values)
            out[order] = values
            return out

        return Predictions(main_probs=gather("main"), p=gather("p"), mf_scores=gather("mf"),
                           main_pred=gather("pred"))


def predict(model, enc: Encoded, pad_id: int | None, batch_size: int = 32,
            autocast_dtype: torch.dtype | None = None, order: str = "length") -> Predictions:
    """Run ``model`` over ``enc`` in batches (sorted by length to cut padding)."""
    device = next(model.parameters()).device
    n = len(enc)
    idx = np.argsort(enc.lengths, kind="stable") if order == "length" else np.arange(n)
    loader = Loader(enc, device, layout_for(model, enc, "padded"), pad_id)
    collect = Collector(model.heads.spec)
    for _, out in outputs(model, loader, batches(idx, batch_size), autocast_dtype,
                          desc=f"predict {n} examples"):
        collect.add(out)
    return collect.result(idx)


def frozen_states(model, enc: Encoded, pad_id: int, batch_size: int = 32,
                  autocast_dtype: torch.dtype | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The frozen backbone's final-layer states of every prompt of ``enc``, in one pass:
    last-token states ``[N, d]`` (the pooled features) and every token's ``[sum_i T_i, d]``
    (prompt i's at rows ``enc.offsets()[i]:...[i + 1]``, for attention pooling), under
    ``autocast_dtype`` autocast when given.

    The prompts are sorted by length and cut into right-padded batches of ``batch_size``;
    a prompt's states then depend on its batch's padded width T (the attention kernels
    block by T: on the CPU a prompt of 62 tokens gets other bits at T = 64 than at 62),
    but not on the other prompts of the batch. So a prompt that occurs several times at
    one width (the stand-in task's sets repeat a few dozen prompts hundreds of times)
    runs once, padded to that width, and its states are copied to every occurrence: the
    same bits as running every occurrence, for a fraction of the tokens. Only where rows
    are independent (:func:`_rows_independent`); elsewhere every occurrence runs.
    """
    order = np.argsort(enc.lengths, kind="stable")
    widths = np.empty(len(enc), dtype=np.int64)
    for index in batches(order, batch_size):
        widths[index] = enc.lengths[index].max()
    if _rows_independent(next(model.parameters()).device):
        first, inverse = enc.distinct(widths)
    else:
        first = inverse = np.arange(len(enc))
    distinct = enc.take(first)
    pooled, tokens = _states(model, distinct, widths[first], pad_id, batch_size,
                             autocast_dtype)
    if len(first) == len(enc):
        return pooled, tokens
    # Row of each token of enc in the distinct prompts' flat states.
    shift = distinct.offsets()[inverse] - enc.offsets()[:-1]
    rows = np.repeat(shift, enc.lengths) + np.arange(int(enc.lengths.sum()))
    return pooled[torch.from_numpy(inverse)], tokens[torch.from_numpy(rows)]


def _rows_independent(device: torch.device) -> bool:
    """Whether a row's states are known not to depend on the other rows of its batch:
    on the CPU with one intra-op thread (the DAG's jobs). With more threads, or on a
    GPU, the matrix products may split their sums by the batch's row count."""
    return device.type == "cpu" and torch.get_num_threads() == 1


@torch.no_grad()
def _states(model, enc: Encoded, widths: np.ndarray, pad_id: int, batch_size: int,
            autocast_dtype: torch.dtype | None) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`frozen_states` of every row of ``enc``, row i padded to ``widths[i]``
    (``[N]``): batches of at most ``batch_size`` rows of one width, by length."""
    model.eval()
    device = next(model.parameters()).device
    offsets = enc.offsets()
    d = hidden_size(model.attach_backbone())
    tokens = torch.empty(int(offsets[-1]), d, device="cpu")
    order = np.lexsort((enc.lengths, widths))  # by width, then length; stable
    plan = [index for w in np.unique(widths)
            for index in batches(order[widths[order] == w], batch_size)]
    for index in progress(plan, desc=f"features {len(enc)} examples"):
        width = int(widths[index[0]])
        batch = to_device(padded(enc, index, pad_id, width=width), device)
        with autocast(device, autocast_dtype):
            states = model.padded_states(batch["input_ids"], batch["attention_mask"])
        src, mask = token_rows(enc, index, width=width)
        rows = (np.arange(len(index))[:, None] * width + np.arange(width))[mask]
        tokens[torch.from_numpy(src[mask])] = states.reshape(-1, d)[
            torch.from_numpy(rows).to(device)].float().cpu()
    # Each prompt's last real token is the last of its rows.
    return tokens[torch.from_numpy(offsets[1:] - 1)].clone(), tokens


def heads_centers(heads) -> np.ndarray | None:
    """The heads' MF centers as numpy ``[Q]`` float64, or None where their MF kind has
    none."""
    c = heads.centers()
    return None if c is None else c.detach().cpu().double().numpy()


def heads_widths(heads) -> np.ndarray | None:
    """The heads' MF widths (Gaussian sigmas) as numpy ``[Q]`` float64, or None where
    their MF kind has none."""
    w = heads.widths()
    return None if w is None else w.detach().cpu().double().numpy()
