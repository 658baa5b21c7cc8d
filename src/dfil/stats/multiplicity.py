"""Multiplicity: Holm's step-down adjustment within families of claims, and the
Bonferroni-bounded level a plan uses for one claim of a family (pure: statsmodels).

Holm (1979) adjusts m p-values so that rejecting those below alpha keeps the familywise
error at most alpha. Each Holm-adjusted p is at most m times its raw p, so a claim whose
raw p is below alpha / m is rejected by Holm whatever the other p-values are: power at
the Bonferroni level alpha / m (:func:`family_alpha`) is a lower bound on power under
Holm, the level a plan sizes seeds at.
"""

from __future__ import annotations

from collections.abc import Sequence

from statsmodels.stats.multitest import multipletests


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted ``pvalues`` (``statsmodels.stats.multitest.multipletests``, method
    ``holm``); a None stays None and counts for nothing."""
    known = [i for i, p in enumerate(pvalues) if p is not None]
    out: list[float | None] = [None] * len(pvalues)
    if known:
        adjusted = multipletests([pvalues[i] for i in known], method="holm")[1]
        for i, p in zip(known, adjusted, strict=True):
            out[i] = float(p)
    return out


def holm_by_family(pvalues: Sequence[float | None], families: Sequence[str]) -> list:
    """Holm-adjusted ``pvalues``, each within its family (``families``, the same order):
    one pass per family."""
    if len(pvalues) != len(families):
        raise ValueError(f"{len(pvalues)} p-values but {len(families)} families")
    out: list[float | None] = [None] * len(pvalues)
    for family in dict.fromkeys(families):
        idx = [i for i, f in enumerate(families) if f == family]
        for i, p in zip(idx, holm([pvalues[i] for i in idx]), strict=True):
            out[i] = p
    return out


def family_alpha(alpha: float, size: int) -> float:
    """The Bonferroni-bounded level of one claim in a family of ``size`` claims:
    alpha / size (a family of 0 or 1: alpha)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    if size < 0:
        raise ValueError(f"a family's size is a count, got {size}")
    return alpha / max(size, 1)
