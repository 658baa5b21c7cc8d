import numpy as np
import pytest
import torch

from dfil.cellconfig import BackboneConfig
from dfil.model import load_backbone
from dfil.model.zero_shot import option_logprobs
from tinymodel import TINY_LLAMA


def test_option_logprobs_equal_a_manual_chain_rule(tiny_tokenizer):
    model = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA)), causal_lm=True).eval()
    prompts = ["ab of the 20: ", "most of"]
    options = ["none", "few", "all"]
    scores = option_logprobs(model, tiny_tokenizer, prompts, options, batch_size=4)
    assert scores.shape == (2, 3)
    # Every pair against the chain rule on its own unpadded sequence (the shorter prompt
    # is left-padded in the batch; the options are several tokens long).
    for a, prompt_text in enumerate(prompts):
        for b, option in enumerate(options):
            prompt = tiny_tokenizer(prompt_text)["input_ids"]
            opt = tiny_tokenizer(" " + option, add_special_tokens=False)["input_ids"]
            with torch.no_grad():
                logits = model(input_ids=torch.tensor([prompt + opt])).logits[0]
            logp = torch.log_softmax(logits, -1)
            manual = sum(logp[len(prompt) - 1 + i, t].item() for i, t in enumerate(opt))
            assert scores[a, b] == pytest.approx(manual, abs=1e-4)
    normalised = option_logprobs(model, tiny_tokenizer, prompts, options, length_normalize=True)
    lengths = [len(tiny_tokenizer(" " + o, add_special_tokens=False)["input_ids"])
               for o in options]
    np.testing.assert_allclose(normalised, scores / np.array(lengths), atol=1e-4)
    assert np.all(scores < 0)
