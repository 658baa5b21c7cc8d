"""A cell's evaluation protocol knobs (pure Python; Sec. 5, App. F)."""

from __future__ import annotations

from typing import Literal

from dfil.config.validation import Count, Share, StrictModel, TupleOf


class EvalConfig(StrictModel):
    """Evaluation protocol knobs (Sec. 5, App. F)."""

    alpha: Share | None = 0.5
    """Ensemble weight of the main path; None selects it on validation (few-shot)."""
    alpha_grid: TupleOf[Share] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    grid_sizes: TupleOf[Count] = (1_000, 10_000, 100_000, 1_000_000)
    csmc_ties: Literal["consistent", "violation"] = "consistent"
    """How a CSMC pair with equal predicted classes counts (note R-csmc-ties)."""
    probes: bool = True
    probe_stride: Count = 1
    """Evaluate every k-th item of each probe set (1 = all, the paper's sizes); for CPU
    runs only (note R-probe-stride)."""
    qure: bool = True
