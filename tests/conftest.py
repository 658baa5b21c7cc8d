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
    """The library's offline character-level tokenizer."""
    from dfil.model.backbone import char_tokenizer

    return char_tokenizer()
