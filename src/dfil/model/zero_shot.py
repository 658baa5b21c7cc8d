"""Zero-shot option scoring (the PRESQUE row of Table scaling; no training).

Each option is scored by the conditional log-probability of its tokens after the prompt,
log P(option | prompt) = sum_t log P(o_t | prompt, o_<t), on the causal LM.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn


@torch.no_grad()
def option_logprobs(
    model: nn.Module,
    tokenizer,
    prompts: Sequence[str],
    options: Sequence[str],
    batch_size: int = 16,
    length_normalize: bool = False,
    option_prefix: str = " ",
) -> np.ndarray:
    """Scores ``[N, Q]``: log P(option_prefix + option | prompt) per prompt and option.

    Prompt and option are tokenised separately and concatenated, so the option's tokens
    are the same after every prompt. With ``length_normalize`` the sum is divided by the
    option's token count (note R-zero-shot).
    """
    option_ids = [tokenizer(option_prefix + o, add_special_tokens=False)["input_ids"]
                  for o in options]
    if any(len(ids) == 0 for ids in option_ids):
        raise ValueError(f"an option tokenises to nothing: {list(options)}")
    pairs = []
    for prompt in prompts:
        prompt_ids = tokenizer(prompt)["input_ids"]
        pairs.extend((prompt_ids, ids) for ids in option_ids)
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    scores = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start:start + batch_size]
        seqs = [a + b for a, b in chunk]
        width = max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = torch.tensor(s)
            mask[i, :len(s)] = 1
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
        logp = torch.log_softmax(logits.float(), dim=-1).cpu()
        for i, (prompt_ids, opt) in enumerate(chunk):
            # Token at position t is predicted by the logits at t - 1.
            pos = torch.arange(len(prompt_ids) - 1, len(prompt_ids) + len(opt) - 1)
            total = logp[i, pos, torch.tensor(opt)].sum().item()
            scores.append(total / len(opt) if length_normalize else total)
    return np.asarray(scores, dtype=np.float64).reshape(len(prompts), len(options))
