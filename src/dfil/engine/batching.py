"""Tokenised examples and the host side of batching: every batch built in numpy.

A batch is a handful of vectorised numpy operations whatever its size: no per-example
Python loop and no per-example torch call. :mod:`dfil.engine.loader` moves the arrays
to the device; the epoch plans (which rows form each step's batch) are here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from itertools import chain

import numpy as np
import torch

#: Batches per window of :func:`grouped_batches` (transformers' ``group_by_length`` uses
#: megabatches of 50 batches as well).
GROUP_WINDOW = 50


@dataclass(frozen=True)
class Encoded:
    """Token ids of N prompts (ragged) with their labels ``[N]`` and proportions ``[N]``.

    ``features [N, d]``, when set, are the frozen backbone's pooled states of the prompts
    (frozen-backbone mode): the heads then read them instead of running the backbone.
    ``states [sum_i T_i, d]``, set for attention pooling in that mode, are its final-layer
    states of every token, prompt i's at rows ``offsets()[i]:offsets()[i + 1]``.
    """

    ids: tuple[tuple[int, ...], ...]
    labels: np.ndarray
    p: np.ndarray
    features: torch.Tensor | None = None
    states: torch.Tensor | None = None
    source_lengths: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def lengths(self) -> np.ndarray:
        """``[N]`` int64 token count of each prompt."""
        return np.fromiter((len(x) for x in self.ids), dtype=np.int64, count=len(self.ids))

    @cached_property
    def flat(self) -> np.ndarray:
        """``[sum_i T_i]`` int64 token ids of every prompt, one after the other."""
        return np.fromiter(chain.from_iterable(self.ids), dtype=np.int64,
                           count=int(self.lengths.sum()))

    def offsets(self) -> np.ndarray:
        """``[N + 1]`` start of each prompt's tokens in a flat ``[sum_i T_i, ...]`` array."""
        return self._offsets

    @cached_property
    def _offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)

    def distinct(self, widths: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The distinct prompts (by token ids, and by ``widths [N]`` when given: the same
        prompt at two widths counts twice): ``first [U]``, the row of each one's first
        occurrence (ascending), and ``inverse [N]``, which of the U each row is."""
        keys = self.ids if widths is None else zip(self.ids, np.asarray(widths).tolist(),
                                                        strict=True)
        seen: dict = {}
        inverse = np.fromiter((seen.setdefault(key, len(seen)) for key in keys),
                              dtype=np.int64, count=len(self.ids))
        return np.unique(inverse, return_index=True)[1].astype(np.int64), inverse

    def take(self, rows: Sequence[int]) -> Encoded:
        """Prompts ``rows`` (in that order), with their features and token states."""
        rows = np.array(rows, dtype=np.int64)
        states = None
        if self.states is not None:
            src, mask = token_rows(self, rows)
            states = self.states[torch.from_numpy(src[mask])]
        return Encoded(ids=tuple(self.ids[i] for i in rows), labels=self.labels[rows],
                       p=self.p[rows],
                       features=None if self.features is None
                       else self.features[torch.from_numpy(rows)],
                       states=states,
                       source_lengths=None if self.source_lengths is None
                       else self.source_lengths[rows])


def concat(sets: Sequence[Encoded]) -> Encoded:
    """``sets`` one after the other (set j's row i at ``sum(len(sets[:j])) + i``), with
    their features and token states; one set comes back as it is."""
    if len(sets) == 1:
        return sets[0]

    def joined(name: str, cat):
        parts = [getattr(s, name) for s in sets]
        if all(part is None for part in parts):
            return None
        if any(part is None for part in parts):
            raise ValueError(f"sets to join differ in whether they have {name}")
        return cat(parts)

    return Encoded(ids=tuple(chain.from_iterable(s.ids for s in sets)),
                   labels=np.concatenate([s.labels for s in sets]),
                   p=np.concatenate([s.p for s in sets]),
                   features=joined("features", torch.cat), states=joined("states", torch.cat),
                   source_lengths=joined("source_lengths", np.concatenate))


def encode(tokenizer, prompts: Sequence[str], labels=None, p=None, max_length: int = 256,
           truncation_side: str = "left") -> Encoded:
    """Tokenise ``prompts``; longer ones keep their last ``max_length`` tokens by default,
    since the prediction is read at the final token. Each prompt's token count before
    the cut is kept (``source_lengths``): the prompts are tokenised whole, and only those
    over ``max_length`` again with the tokenizer's own truncation."""
    prompts = list(prompts)
    tokenizer.truncation_side = truncation_side
    ids = list(tokenizer(prompts, truncation=False, verbose=False)["input_ids"])
    whole = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    long = np.flatnonzero(whole > max_length).tolist()
    if long:
        cut = tokenizer([prompts[i] for i in long], truncation=True, max_length=max_length)
        for i, row in zip(long, cut["input_ids"], strict=True):
            ids[i] = row
    return replace(_encoded(tuple(tuple(x) for x in ids), labels, p), source_lengths=whole)


def encode_ids(flat, lengths, labels=None, p=None, source_lengths=None) -> Encoded:
    """Encoded prompts from token ids stored flat ``[sum_i T_i]`` with lengths ``[N]``
    (and, when known, their lengths before the cut ``[N]``)."""
    rows = np.split(np.asarray(flat), np.cumsum(np.asarray(lengths))[:-1])
    enc = _encoded(tuple(tuple(r.tolist()) for r in rows), labels, p)
    if source_lengths is None:
        return enc
    return replace(enc, source_lengths=np.asarray(source_lengths, dtype=np.int64))


def _encoded(ids: tuple[tuple[int, ...], ...], labels, p) -> Encoded:
    n = len(ids)
    return Encoded(
        ids=ids,
        labels=np.array(labels if labels is not None else np.zeros(n), dtype=np.int64),
        p=np.array(p if p is not None else np.full(n, np.nan), dtype=np.float32),
    )


def token_rows(enc: Encoded, index, multiple: int = 1,
               width: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded token layout of rows ``index``: ``src [B, T]`` the position of each
    token in the flat ``[sum_i T_i]`` arrays (0 at pads) and ``mask [B, T]`` (True at real
    tokens), ``T`` the longest prompt of the batch rounded up to a ``multiple`` (few
    distinct shapes for compiled kernels), or ``width`` when given (at least that)."""
    index = np.asarray(index, dtype=np.int64)
    lengths = enc.lengths[index]
    if len(lengths) == 0 or lengths.min() < 1:
        raise ValueError(f"a batch needs prompts of at least one token; rows {index.tolist()} "
                         f"have lengths {lengths.tolist()}")
    longest = -(-int(lengths.max()) // multiple) * multiple
    if width is not None and width < longest:
        raise ValueError(f"width {width} is shorter than the batch's longest prompt {longest}")
    cols = np.arange(longest if width is None else width, dtype=np.int64)
    mask = cols < lengths[:, None]
    src = np.where(mask, enc.offsets()[index][:, None] + cols, 0)
    return src, mask


def padded(enc: Encoded, index, pad_id: int, multiple: int = 1,
           width: int | None = None) -> dict[str, np.ndarray]:
    """Right-padded batch of rows ``index`` (B of them), T rounded up to a ``multiple``
    (or ``width``, :func:`token_rows`):

    ``input_ids [B, T]`` (``pad_id`` after each prompt), ``attention_mask [B, T]`` int64,
    ``last [B]`` each example's final token as a flat index into ``[B * T]``, ``rows [B]``.
    """
    src, mask = token_rows(enc, index, multiple, width)
    ids = np.where(mask, enc.flat[src], pad_id)
    width = mask.shape[1]
    last = np.arange(len(mask), dtype=np.int64) * width + mask.sum(1) - 1
    return {"input_ids": ids, "attention_mask": mask.astype(np.int64), "last": last,
            "rows": np.asarray(index, dtype=np.int64)}


def packed(enc: Encoded, index) -> tuple[dict[str, np.ndarray], int]:
    """Padding-free batch of rows ``index``: the prompts concatenated into one sequence.

    Returns the arrays ``input_ids [1, S]``, ``position_ids [1, S]`` (restarting at 0 for
    each example), ``cu_seq_lens [B + 1]`` (each example's start in ``[S]``, then S; what
    flash attention's varlen kernel takes), ``last [B]`` (each example's final token in
    ``[S]``) and ``rows [B]``, with the longest prompt's length (a host int).
    """
    index = np.asarray(index, dtype=np.int64)
    lengths = enc.lengths[index]
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    starts = np.repeat(cu[:-1], lengths)  # each token's example start in [S]
    j = np.arange(int(cu[-1]), dtype=np.int64)
    ids = enc.flat[np.repeat(enc.offsets()[index], lengths) + j - starts]
    arrays = {"input_ids": ids[None], "position_ids": (j - starts)[None], "cu_seq_lens": cu,
              "last": cu[1:] - 1, "rows": index}
    return arrays, int(lengths.max())


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The shuffled example order of one epoch, a pure function of (seed, epoch) so a
    resumed run sees exactly the batches an uninterrupted one would."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def batches(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """``order`` cut into consecutive batches of ``batch_size`` (the last may be smaller)."""
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]


def grouped_batches(order: np.ndarray, lengths: np.ndarray, batch_size: int, seed: int,
                    epoch: int, window: int = GROUP_WINDOW) -> list[np.ndarray]:
    """Batches of similar prompt lengths from one epoch's shuffled ``order``.

    ``order`` is cut into windows of ``window`` batches; each window is sorted by length
    (longest first, ties in ``order``'s order) and cut into batches; the batches are then
    put in an order drawn from (seed, epoch). Every example is seen once and the number
    of batches is that of :func:`batches` (only the last window's last batch can be
    short). ``lengths [N]`` are the prompts' token counts.
    """
    if batch_size < 1 or window < 1:
        raise ValueError(f"batch_size and window must be >= 1, got {batch_size}, {window}")
    span = window * batch_size
    out: list[np.ndarray] = []
    for start in range(0, len(order), span):  # one iteration per window, not per example
        chunk = order[start:start + span]
        out.extend(batches(chunk[np.argsort(-lengths[chunk], kind="stable")], batch_size))
    perm = np.random.default_rng([seed, epoch, 1]).permutation(len(out))
    return [out[i] for i in perm]
