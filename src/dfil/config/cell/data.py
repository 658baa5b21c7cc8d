"""A cell's data configuration: which task and source, how it is cut (pure Python)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from dfil.config.validation import Count, NonNegative, StrictModel


class DataConfig(StrictModel):
    """Where the cell's data comes from and how it is cut (Sec. 5.1, App. C.3)."""

    task: Literal["frog", "sst5", "sts22", "ordinal_standin"] = "frog"
    source: str = "GAIR/FRoG"
    """FRoG: hub id, local file or directory (e.g. the synthetic stand-in's)."""
    test_source: str = ""
    """Test split source when it differs from ``source`` (SST-5/STS22 local files; FRoG
    when ``source`` is a single file)."""
    allowed_test_overlap: NonNegative = 0
    """Test items that may also be in train/val (by id or text). 0: any overlap is refused;
    only for a benchmark whose own splits overlap (or a stand-in with repeated texts)."""
    frog_task: str = "mask_quant"
    train_frac: Annotated[float, Field(gt=0, lt=1)] = 0.8
    split_seed: NonNegative = 0
    budget: Count | None = None
    """Few-shot training budget N; None trains on the full train split."""
    fewshot_min_per_class: NonNegative = 1
    fewshot_seed: NonNegative | None = None
    """Seed of the few-shot subsample; None draws a subset per training seed."""
    max_examples: NonNegative = 0
    """Cap on examples per split (0 = all), for smoke runs only."""
    max_length: Count = 256
    truncation_side: Literal["left", "right"] = "left"
    """Keep the end of long prompts ("Answer:" is where the last-token state is read)."""
    probes_dir: str = ""
    qure_source: str = ""
    qure_rows: Count = 401
    """Rows QuRe's transfer set must have (the paper's 401 few/some/most/all sentences): a
    truncated file is refused, not scored on what is left."""
    prompt: Literal["paper", "compact"] = "paper"
    """``paper``: App. C.2's multiple-choice prompt; ``compact``: the sentence and
    "Answer:" only, ~40% of the tokens, for CPU runs (note R-compact-prompt)."""
    standin: bool = False
    """Say so in every output when the data is a synthetic stand-in."""
