"""Shared fixtures: the reference data in ../shared/data and a tiny offline tokenizer."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data not found at {SHARED}")
    return SHARED


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
