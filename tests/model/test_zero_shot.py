import numpy as np
import pytest
import torch

from dfil.config import BackboneConfig
from dfil.model import load_backbone
from dfil.model.zero_shot import option_logprobs
from tinymodel import TINY_LLAMA


def test_option_logprobs_equal_a_manual_chain_rule(tiny_tokenizer):
    model = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA)), causal_lm=True).eval()
    prompts = ["ab of the 20: ", "most of"]
    options = ["none", "few", "all"]
    scores = option_logprobs(model, tiny_tokenizer, prompts, options, batch_size=4)
    assert scores.shape == (2, 3)
    prompt = tiny_tokenizer(prompts[1])["input_ids"]
    opt = tiny_tokenizer(" few", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + opt])).logits[0]
    logp = torch.log_softmax(logits, -1)
    manual = sum(logp[len(prompt) - 1 + i, t].item() for i, t in enumerate(opt))
    assert scores[1, 1] == pytest.approx(manual, abs=1e-4)
    normalised = option_logprobs(model, tiny_tokenizer, prompts, options, length_normalize=True)
    assert normalised[1, 1] == pytest.approx(manual / len(opt), abs=1e-4)
    assert np.all(scores < 0)
