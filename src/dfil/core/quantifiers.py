"""The ordered quantifier label set and the QuRe reference centers (pure Python).

FRoG's ``mask_quant`` task has 8 ordered classes q0 < ... < q7 (paper Sec. 5.1, App. C.2).
The QuRe centers are the paper's MF initialisation and the fixed ground truth of its
"QuRe-based" protocols (Sec. 4.2, App. F).
"""

from __future__ import annotations

FROG_CLASSES: tuple[str, ...] = (
    "none",
    "tiny amount",
    "few",
    "small amount",
    "some",
    "moderate amount",
    "most",
    "all",
)

#: Paper Sec. 4.2: centers initialised from QuRe, (.02 .08 .18 .28 .40 .58 .78 .97).
QURE_CENTERS: tuple[float, ...] = (0.02, 0.08, 0.18, 0.28, 0.40, 0.58, 0.78, 0.97)

#: Eq. (ordered_centers): c = cumsum(delta) * CENTER_SPAN + CENTER_LOW.
CENTER_LOW = 0.02
CENTER_SPAN = 0.96
#: Eq. (ordered_centers): delta = softmax(delta_raw) + DELTA_EPS.
DELTA_EPS = 1e-4


def class_index(name: str, classes: tuple[str, ...] = FROG_CLASSES) -> int:
    """Index of quantifier ``name`` in ``classes``; ``ValueError`` naming it otherwise."""
    try:
        return classes.index(name.strip().lower())
    except ValueError:
        raise ValueError(f"unknown quantifier {name!r}; expected one of {list(classes)}") from None
