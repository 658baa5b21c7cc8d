"""Tokenised examples and padded batches (torch only where tensors are)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch


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

    def __len__(self) -> int:
        return len(self.ids)

    def offsets(self) -> np.ndarray:
        """``[N + 1]`` start of each prompt's tokens in a flat ``[sum_i T_i, ...]`` array."""
        return np.concatenate([[0], np.cumsum([len(x) for x in self.ids])])

    def take(self, rows: Sequence[int]) -> Encoded:
        """Prompts ``rows`` (in that order), with their features and token states."""
        rows = np.array(rows, dtype=np.int64)
        states = None
        if self.states is not None:
            o = self.offsets()
            states = torch.cat([self.states[o[i]:o[i + 1]] for i in rows])
        return Encoded(ids=tuple(self.ids[i] for i in rows), labels=self.labels[rows],
                       p=self.p[rows],
                       features=None if self.features is None
                       else self.features[torch.as_tensor(rows)],
                       states=states)


def encode(tokenizer, prompts: Sequence[str], labels=None, p=None, max_length: int = 256,
           truncation_side: str = "left") -> Encoded:
    """Tokenise ``prompts``; longer ones keep their last ``max_length`` tokens by default,
    since the prediction is read at the final token."""
    tokenizer.truncation_side = truncation_side
    out = tokenizer(list(prompts), truncation=True, max_length=max_length)
    return _encoded(tuple(tuple(x) for x in out["input_ids"]), labels, p)


def encode_ids(flat, lengths, labels=None, p=None) -> Encoded:
    """Encoded prompts from token ids stored flat ``[sum_i T_i]`` with lengths ``[N]``."""
    rows = np.split(np.asarray(flat), np.cumsum(np.asarray(lengths))[:-1])
    return _encoded(tuple(tuple(r.tolist()) for r in rows), labels, p)


def _encoded(ids: tuple[tuple[int, ...], ...], labels, p) -> Encoded:
    n = len(ids)
    return Encoded(
        ids=ids,
        labels=np.array(labels if labels is not None else np.zeros(n), dtype=np.int64),
        p=np.array(p if p is not None else np.full(n, np.nan), dtype=np.float32),
    )


def targets(enc: Encoded, index: Sequence[int], device="cpu"):
    """Labels ``[B]`` and proportions ``[B]`` of rows ``index``."""
    idx = np.asarray(index)
    return (torch.from_numpy(enc.labels[idx]).to(device),
            torch.from_numpy(enc.p[idx]).to(device))


def collate(enc: Encoded, index: Sequence[int], pad_id: int, device="cpu"):
    """Right-padded ``input_ids [B, T]``, ``attention_mask [B, T]``, ``labels [B]``, ``p [B]``."""
    rows = [enc.ids[i] for i in index]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for j, r in enumerate(rows):
        ids[j, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[j, : len(r)] = 1
    return (ids.to(device), mask.to(device), *targets(enc, index, device))


def collate_states(enc: Encoded, index: Sequence[int], device="cpu"):
    """Cached token states of rows ``index``, right-padded like :func:`collate`:
    ``states [B, T, d]`` and ``attention_mask [B, T]``."""
    offsets = enc.offsets()
    rows = [enc.states[offsets[i]:offsets[i + 1]] for i in index]
    states = torch.nn.utils.rnn.pad_sequence(rows, batch_first=True)
    mask = torch.zeros(states.shape[:2], dtype=torch.long)
    for j, r in enumerate(rows):
        mask[j, : len(r)] = 1
    return states.to(device), mask.to(device)


def collate_packed(enc: Encoded, index: Sequence[int], device="cpu"):
    """Padding-free batch: the rows of ``index`` concatenated into one sequence.

    Returns ``input_ids [1, T]``, ``position_ids [1, T]`` restarting at 0 for each example
    (transformers turns restarting positions into a block-diagonal causal mask, so no token
    attends across examples), ``last [B]`` the index of each example's final token,
    ``labels [B]`` and ``p [B]``.
    """
    rows = [enc.ids[i] for i in index]
    lengths = torch.tensor([len(r) for r in rows])
    ids = torch.tensor([t for r in rows for t in r], dtype=torch.long).unsqueeze(0)
    positions = torch.cat([torch.arange(n) for n in lengths.tolist()]).unsqueeze(0)
    last = torch.cumsum(lengths, 0) - 1
    return (ids.to(device), positions.to(device), last.to(device),
            *targets(enc, index, device))


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The shuffled example order of one epoch, a pure function of (seed, epoch) so a
    resumed run sees exactly the batches an uninterrupted one would."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def batches(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
