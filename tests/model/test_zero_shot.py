import numpy as np
import pytest
import torch

from dfil.config.cell import BackboneConfig
from dfil.model import load_backbone
from dfil.model.zero_shot import MIN_SHARED_ROWS, option_logprobs, same_length_batches
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


@pytest.fixture
def one_thread():
    """One intra-op thread, as the DAG's jobs run (OMP_NUM_THREADS=cpus_per_task=1)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_batched_scores_equal_scoring_each_prompt_alone(tiny_tokenizer, one_thread):
    model = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA)), causal_lm=True).eval()
    # Mixed lengths out of order (character tokens): two prompts of 5 ("ab of", "xy of"),
    # two of 7 ("most of", "some of"), one of 14; with batch_size=2 the batches are
    # rows [1, 4], [0, 2] and [3], each scored without padding.
    prompts = ["most of", "ab of", "some of", "ab of the 20: ", "xy of"]
    options = ["none", "few", "all"]
    batched = option_logprobs(model, tiny_tokenizer, prompts, options, batch_size=2)
    alone = np.concatenate([option_logprobs(model, tiny_tokenizer, [p], options, batch_size=1)
                            for p in prompts])
    assert (batched == alone).all()
    assert not np.array_equal(batched[1], batched[4])  # rows are not mixed up


def test_same_length_batches_never_mix_lengths():
    batches = same_length_batches([3, 1, 3, 2, 3, 1], batch_size=2)
    assert [b.tolist() for b in batches] == [[1, 5], [3], [0, 2], [4]]


class CallCounter:
    """Wraps a model, counting its forward passes."""

    def __init__(self, model):
        self.model, self.calls = model, 0

    def __call__(self, **kwargs):
        self.calls += 1
        return self.model(**kwargs)

    def parameters(self):
        return self.model.parameters()


def test_options_of_one_length_share_one_pass_with_scores_of_one_pass_each(tiny_tokenizer,
                                                                            one_thread):
    model = load_backbone(BackboneConfig(arch=dict(TINY_LLAMA)), causal_lm=True).eval()
    # Character tokens: " none" is 5 tokens, " few" and " all" 4 each. The prompts are
    # 5 tokens each: one batch of 4 (MIN_SHARED_ROWS), then one of 3.
    prompts, options = ["ab of", "xy of", "cd of", "ef of"], ["none", "few", "all"]
    assert MIN_SHARED_ROWS == 4
    counted = CallCounter(model)
    together = option_logprobs(counted, tiny_tokenizer, prompts, options, batch_size=4)
    # one prompt pass, one pass for " few"/" all" (3 more tokens), one for " none"
    assert counted.calls == 3
    each = np.concatenate([option_logprobs(model, tiny_tokenizer, prompts, [o])
                           for o in options], axis=1)
    assert np.array_equal(together, each)
    counted.calls = 0
    option_logprobs(counted, tiny_tokenizer, prompts[:3], options, batch_size=4)
    assert counted.calls == 4  # fewer rows: one pass per option
