"""Shared fixtures: a tiny random Llama-architecture backbone and a tiny offline tokenizer."""

from __future__ import annotations

import pytest

from dfil.config import BackboneConfig, LoraConfig, ModelConfig

TINY_LLAMA = {
    "model_type": "llama",
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 96,
    "max_position_embeddings": 128,
    "pad_token_id": 0,
}


def tiny_config(method: str = "dfil", **overrides) -> ModelConfig:
    backbone = BackboneConfig(name="tiny-llama", arch=dict(TINY_LLAMA), init_seed=0)
    fields = {"backbone": backbone, "lora": LoraConfig(r=4, alpha=8), **overrides}
    return ModelConfig(method=method, **fields)


@pytest.fixture
def tiny_tokenizer():
    """A character-level fast tokenizer built in memory (no hub access)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    chars = " abcdefghijklmnopqrstuvwxyz0123456789.,:;!?()_\"'-%ABCDEFGHIJKLMNOPQRSTUVWXYZ\n"
    vocab = {"<pad>": 0, "<s>": 1, "<unk>": 2}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>")
