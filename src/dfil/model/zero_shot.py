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
    are the same after every prompt. Each batch of prompts (left-padded, positions
    restarting at each prompt's first token) is encoded once; every option then runs
    only its own tokens on the prompts' KV cache, which is cropped back to the prompts
    afterwards - one prompt pass instead of Q. With ``length_normalize`` the sum is
    divided by the option's token count (note R-zero-shot). Precision: the caller's
    autocast context (:func:`dfil.engine.device.autocast`).
    """
    option_ids = [tokenizer(option_prefix + o, add_special_tokens=False)["input_ids"]
                  for o in options]
    if any(len(ids) == 0 for ids in option_ids):
        raise ValueError(f"an option tokenises to nothing: {list(options)}")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    scores = np.empty((len(prompts), len(options)), dtype=np.float64)
    for start in range(0, len(prompts), batch_size):
        encoded = [tokenizer(p)["input_ids"] for p in prompts[start:start + batch_size]]
        b, width = len(encoded), max(len(s) for s in encoded)
        ids = torch.full((b, width), pad, dtype=torch.long, device="cpu")
        mask = torch.zeros((b, width), dtype=torch.long, device="cpu")
        for i, s in enumerate(encoded):
            ids[i, width - len(s):] = torch.tensor(s, device="cpu")
            mask[i, width - len(s):] = 1
        ids, mask = ids.to(device), mask.to(device)
        lengths = mask.sum(1, keepdim=True)
        # Only the last position's logits are needed: skipping the LM head over the
        # others saves ~20% of the pass on a small-vocabulary-heavy model (SmolLM2).
        out = model(input_ids=ids, attention_mask=mask,
                    position_ids=(mask.cumsum(1) - 1).clamp(min=0), use_cache=True,
                    logits_to_keep=1)
        first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        cache = out.past_key_values
        for j, opt in enumerate(option_ids):
            # The prompt's last position predicts the first option token; the option's
            # own tokens (all but its last) predict the rest.
            total = first[:, opt[0]].clone()
            if len(opt) > 1:
                k = len(opt) - 1
                logits = model(
                    input_ids=torch.tensor(opt[:-1], device=device).expand(b, k),
                    attention_mask=torch.cat([mask, mask.new_ones(b, k)], dim=1),
                    position_ids=lengths + torch.arange(k, device=device),
                    past_key_values=cache, use_cache=True).logits
                logp = torch.log_softmax(logits.float(), dim=-1)
                nxt = torch.tensor(opt[1:], device=device).expand(b, k)
                total += logp.gather(2, nxt.unsqueeze(-1)).squeeze(-1).sum(1)
                cache.crop(-k)  # back to the prompts (negative: tokens to drop)
            if length_normalize:
                total /= len(opt)
            scores[start:start + b, j] = total.cpu().numpy()
    return scores
