"""Batches on the device without host synchronisation: one copy per batch, one step ahead.

A :class:`Loader` keeps an encoded set's labels, proportions (and cached features) on the
device, copied once. Each batch is built on the host in numpy
(:mod:`dfil.engine.batching`), packed into one int64 buffer, pinned (CUDA) and copied with
``non_blocking=True``; labels and proportions are then gathered on the device. Iterating
over a plan builds and sends the next batch before the current one is handed out, so the
host never waits for the device between steps.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from dfil.engine.batching import Encoded, packed, padded, token_rows

LAYOUTS = ("padded", "packed", "features")


@dataclass
class Batch:
    """One batch of B examples on the device (absent parts None).

    ``rows [B]`` their indices in the encoded set; ``y [B]`` labels; ``p [B]`` proportions.
    Padded: ``input_ids, attention_mask [B, T]``; packed: ``input_ids, position_ids
    [1, S]``, ``cu_seq_lens [B + 1]`` int32 and ``max_length`` (host int); both: ``last
    [B]`` each example's final token as a flat index into ``[B * T]`` or ``[S]``.
    Features: ``features [B, d]`` and, for attention pooling, ``states [B, T, d]`` with
    ``attention_mask [B, T]``.
    """

    size: int
    rows: torch.Tensor
    y: torch.Tensor
    p: torch.Tensor
    input_ids: torch.Tensor | None = None
    attention_mask: torch.Tensor | None = None
    position_ids: torch.Tensor | None = None
    cu_seq_lens: torch.Tensor | None = None
    max_length: int = 0
    last: torch.Tensor | None = None
    features: torch.Tensor | None = None
    states: torch.Tensor | None = None


def to_device(arrays: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    """int64 ``arrays`` on ``device`` in one copy: concatenated into one host buffer,
    pinned and sent with ``non_blocking=True`` on CUDA, then split into views."""
    shapes = {k: a.shape for k, a in arrays.items()}
    flat = np.concatenate([np.asarray(a, dtype=np.int64).ravel() for a in arrays.values()])
    host = torch.from_numpy(flat)
    if device.type == "cuda":
        host = host.pin_memory()
    buf = host.to(device, non_blocking=True)
    out, at = {}, 0
    for k, shape in shapes.items():
        n = int(np.prod(shape))
        out[k] = buf[at:at + n].view(shape)
        at += n
    return out


class Loader:
    """Device batches of ``enc`` in one ``layout`` ("padded", "packed" or "features").

    ``pad_id`` fills padded batches, whose length is rounded up to ``pad_multiple``.
    Labels ``[N]``, proportions ``[N]`` and, in the features layout, the cached features
    ``[N, d]`` (and token states) go to ``device`` once, here.
    """

    def __init__(self, enc: Encoded, device, layout: str, pad_id: int | None = None,
                 pad_multiple: int = 1):
        if layout not in LAYOUTS:
            raise ValueError(f"unknown batch layout {layout!r}; expected one of {LAYOUTS}")
        if layout == "padded" and pad_id is None:
            raise ValueError("padded batches need a pad_id")
        if layout == "features" and enc.features is None:
            raise ValueError("the features layout needs cached features (frozen backbone)")
        self.enc, self.layout, self.pad_id, self.pad_multiple = enc, layout, pad_id, pad_multiple
        self.device = torch.device(device)
        self.labels = torch.from_numpy(enc.labels).to(self.device)
        self.p = torch.from_numpy(enc.p).to(self.device)
        self.features = self.states = None
        if layout == "features":
            self.features = enc.features.to(self.device)
            if enc.states is not None:
                self.states = enc.states.to(self.device)

    def batch(self, index: Sequence[int]) -> Batch:
        """Rows ``index`` as a device :class:`Batch` (the copy is queued, not awaited)."""
        index = np.asarray(index, dtype=np.int64)
        extra: dict = {}
        if self.layout == "padded":
            arrays = padded(self.enc, index, self.pad_id, self.pad_multiple)
        elif self.layout == "packed":
            arrays, extra["max_length"] = packed(self.enc, index)
        else:
            arrays = {"rows": index}
            if self.states is not None:
                src, mask = token_rows(self.enc, index)
                arrays.update(src=src, attention_mask=mask.astype(np.int64))
        t = to_device(arrays, self.device)
        rows = t.pop("rows")
        if "cu_seq_lens" in t:
            t["cu_seq_lens"] = t["cu_seq_lens"].to(torch.int32)
        if self.layout == "features":
            t["features"] = self.features.index_select(0, rows)
            if self.states is not None:
                src, mask = t.pop("src"), t["attention_mask"]
                states = self.states.index_select(0, src.flatten()).view(*src.shape, -1)
                t["states"] = states * mask.unsqueeze(-1).to(states.dtype)  # zeros at pads
        return Batch(size=len(index), rows=rows, y=self.labels.index_select(0, rows),
                     p=self.p.index_select(0, rows), **extra, **t)

    def __call__(self, plan: Sequence[Sequence[int]]) -> Iterator[Batch]:
        """The batches of ``plan`` in order, each built and sent one step ahead."""
        if not len(plan):
            return
        upcoming = self.batch(plan[0])
        for i in range(len(plan)):
            current = upcoming
            if i + 1 < len(plan):
                upcoming = self.batch(plan[i + 1])
            yield current
