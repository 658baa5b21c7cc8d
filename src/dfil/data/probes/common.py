"""Shared pieces of the probe-set generators: QuRe ground truth and fraction drawing."""

from __future__ import annotations

import numpy as np

from dfil.core.inference import nearest_center
from dfil.core.quantifiers import FROG_CLASSES, QURE_CENTERS, class_index

#: How each quantifier reads in running text ("[Q] of the ...").
SURFACE = {
    "none": "none",
    "tiny amount": "a tiny share",
    "few": "few",
    "small amount": "a small share",
    "some": "some",
    "moderate amount": "a moderate share",
    "moderate": "a moderate share",
    "most": "most",
    "all": "all",
}

_TOTALS = (20, 25, 40, 50, 60, 80, 100, 120, 150, 200, 250, 400, 500)


def quantifier(name: str) -> int:
    """FRoG class index of a probe quantifier name ("moderate" is "moderate amount")."""
    return class_index("moderate amount" if name == "moderate" else name)


def qure_label(p) -> np.ndarray:
    """QuRe-based ground truth: nearest fixed QuRe center (Sec. 5.2)."""
    return nearest_center(p, QURE_CENTERS)


def qure_cell(q: int) -> tuple[float, float]:
    """The p-interval whose nearest QuRe center is class ``q``: [b_{q-1}, b_q]."""
    c = QURE_CENTERS
    lo = 0.0 if q == 0 else (c[q - 1] + c[q]) / 2
    hi = 1.0 if q == len(c) - 1 else (c[q] + c[q + 1]) / 2
    return lo, hi


def draw_fraction(rng: np.random.Generator, lo: float, hi: float,
                  totals=_TOTALS, label: int | None = None) -> tuple[int, int]:
    """A count k and total N with lo <= k/N <= hi, N drawn from ``totals``.

    With ``label``, k/N must also have that QuRe nearest-center label, which settles the
    cell boundaries exactly (a midpoint goes to the smaller class). Rejection on N.
    """
    for _ in range(1000):
        n = int(rng.choice(totals))
        ks = np.arange(int(np.ceil(lo * n - 1e-9)), int(np.floor(hi * n + 1e-9)) + 1)
        if label is not None:
            ks = ks[qure_label(ks / n) == label]
        if ks.size:
            return int(rng.choice(ks)), n
    raise ValueError(f"no fraction k/N in [{lo}, {hi}] for totals {totals}")


def draw_in_cell(rng: np.random.Generator, q: int, lo: float = 0.0,
                 hi: float = 1.0) -> tuple[int, int]:
    """k/N in [lo, hi] whose QuRe nearest-center class is ``q``."""
    cell_lo, cell_hi = qure_cell(q)
    return draw_fraction(rng, max(lo, cell_lo), min(hi, cell_hi), label=q)


def label_fields(prefix: str, p: float) -> dict:
    """``{prefix}label`` and ``{prefix}label_name`` of p under the QuRe GT."""
    label = int(qure_label(p))
    return {f"{prefix}label": label, f"{prefix}label_name": FROG_CLASSES[label]}
