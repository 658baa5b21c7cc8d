"""Shared fixtures: the reference data in ../shared/data and a tiny offline tokenizer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# No test downloads anything: the hub clients are offline unless a test's fetch lifts the
# flags for itself (dfil.hub), as in CI and the quickstart. Set before anything imports
# huggingface_hub, which reads them once.
for _flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ.setdefault(_flag, "1")

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
