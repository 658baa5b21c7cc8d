"""Zero-shot option scoring (the PRESQUE row of Table scaling; no training).

Each option is scored by the conditional log-probability of its tokens after the prompt,
log P(option | prompt) = sum_t log P(o_t | prompt, o_<t), on the causal LM.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

#: What precedes every option after the prompt (note R-zero-shot): " " + option.
OPTION_PREFIX = " "


@torch.no_grad()
def option_logprobs(model: nn.Module, tokenizer, prompts: Sequence[str],
                    options: Sequence[str], batch_size: int = 16,
                    length_normalize: bool = False) -> np.ndarray:
    """Scores ``[N, Q]``: log P(OPTION_PREFIX + option | prompt) per prompt and option.

    Prompt and option are tokenised separately and concatenated, so the option's tokens
    are the same after every prompt. Prompts are tokenised once and batched only with
    prompts of the same token length (:func:`same_length_batches`), so no batch is padded
    and a prompt's scores do not depend on which prompts share its batch: on the CPU with
    one intra-op thread (the DAG's jobs) they are bit-identical to scoring it alone. (With
    more threads the BLAS splits a matrix product by its row count, which then changes the
    float sums; left padding changes them too.) Each batch is encoded once; every option
    then runs only its own tokens on the prompts' KV cache, which is cropped back to the
    prompts afterwards - one prompt pass instead of Q, and one pass per option length
    for the options' further tokens (:func:`_rest_logprobs`). Scores come back in the prompts'
    order. With ``length_normalize`` the sum is divided by the option's token count (note
    R-zero-shot). Precision: the caller's autocast context
    (:func:`dfil.engine.device.autocast`).
    """
    option_ids = [tokenizer(OPTION_PREFIX + o, add_special_tokens=False)["input_ids"]
                  for o in options]
    if any(len(ids) == 0 for ids in option_ids):
        raise ValueError(f"an option tokenises to nothing: {list(options)}")
    device = next(model.parameters()).device
    scores = np.empty((len(prompts), len(options)), dtype=np.float64)
    encoded = [tokenizer(p)["input_ids"] for p in prompts]
    for rows in same_length_batches([len(s) for s in encoded], batch_size):
        ids = torch.tensor([encoded[i] for i in rows], dtype=torch.long).to(device)
        mask = torch.ones_like(ids)
        # Only the last position's logits are needed: skipping the LM head over the
        # others saves ~20% of the pass on a small-vocabulary-heavy model (SmolLM2).
        out = model(input_ids=ids, attention_mask=mask,
                    position_ids=(mask.cumsum(1) - 1), use_cache=True, logits_to_keep=1)
        first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        rest = _rest_logprobs(model, out.past_key_values, mask, option_ids)
        for j, opt in enumerate(option_ids):
            total = first[:, opt[0]] + rest[j]
            if length_normalize:
                total /= len(opt)
            scores[rows, j] = total.cpu().numpy()
    return scores


def same_length_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Row indices cut into batches of at most ``batch_size``, each of one length:
    lengths ascending, rows in their order within a length. ``[N] -> [[<=B]]``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(lengths, kind="stable")
    out: list[np.ndarray] = []
    for length in np.unique(lengths):
        same = order[lengths[order] == length]
        out.extend(same[i:i + batch_size] for i in range(0, len(same), batch_size))
    return out


#: The fewest prompts of a batch whose options share a pass (:func:`_share_passes`).
MIN_SHARED_ROWS = 4


def _share_passes(rows: int, device: torch.device) -> bool:
    """Whether a batch of ``rows`` prompts gets the same bits with its options in one
    pass (``n * rows`` rows) as in one pass each: on the CPU with one intra-op thread,
    from :data:`MIN_SHARED_ROWS` rows. A product of fewer rows runs other BLAS kernels
    (measured with SmolLM2-135M, torch 2.13: batches of 1 to 3 prompts change in the last
    bits, 4 to 32 do not); with more threads, or on a GPU, the split of a product's sums
    may follow its row count."""
    return device.type == "cpu" and torch.get_num_threads() == 1 and rows >= MIN_SHARED_ROWS


def _rest_logprobs(model: nn.Module, cache, mask: torch.Tensor,
                   options: list[list[int]]) -> list[torch.Tensor]:
    """Per option, ``[B]`` log P of its tokens after its first, given the prompts in
    ``cache`` (``mask [B, T]``): the prompt's last position predicts the first token
    (the caller's), the option's own tokens (all but its last) the rest; zeros for a
    one-token option. The options with k further tokens run in one pass over the cache
    repeated for each (rows ``b * n + o``), not one pass each: the pass of a few tokens
    per prompt reads every weight once whatever its rows, so it costs ~1/n. Only where
    that keeps every bit (:func:`_share_passes`); elsewhere one pass per option.
    ``cache`` is put back to the prompts afterwards."""
    b, device = mask.shape[0], mask.device
    out = [mask.new_zeros(b, dtype=torch.float32) for _ in options]
    by_k: dict[int, list[int]] = {}
    for j, opt in enumerate(options):
        if len(opt) > 1:
            by_k.setdefault(len(opt) - 1, []).append(j)
    share = _share_passes(b, device)
    groups = list(by_k.values()) if share else [[j] for js in by_k.values() for j in js]
    for js in groups:
        n, k = len(js), len(options[js[0]]) - 1
        rows = mask
        if n > 1:  # one option alone runs on the cache as it is, no copy
            cache.batch_repeat_interleave(n)
            rows = mask.repeat_interleave(n, dim=0)
        logits = model(input_ids=torch.tensor([options[j][:-1] for j in js],
                                              device=device).repeat(b, 1),
                       attention_mask=torch.cat([rows, rows.new_ones(b * n, k)], dim=1),
                       position_ids=rows.sum(1, keepdim=True) + torch.arange(k, device=device),
                       past_key_values=cache, use_cache=True).logits
        logp = torch.log_softmax(logits.float(), dim=-1)
        nxt = torch.tensor([options[j][1:] for j in js], device=device).repeat(b, 1)
        cache.crop(-k)  # back to the prompts (negative: tokens to drop)
        if n > 1:
            cache.batch_select_indices(torch.arange(0, b * n, n, device=device))
        sums = logp.gather(2, nxt.unsqueeze(-1)).squeeze(-1).sum(1).view(b, n)
        for o, j in enumerate(js):
            out[j] = sums[:, o]
    return out
