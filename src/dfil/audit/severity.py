"""How much an audit finding matters: one declared rule from a check's verdict, its
declared ``stakes`` and whether the recomputed value turns the printed claim around
(pure).

A check declares its stakes (``config/paper_audit.yaml``, default ``result``):

- ``headline``: the printed value is the direction or the significance of a claim the
  paper's abstract, ``tab:headline`` or its results section (Sec. 5) rests on;
- ``result``: a number a reader takes as a result (an accuracy, a Δ, a count, a p);
- ``presentation``: rounding, a standard-deviation convention, a label, a bold mark, a
  worked example, a wording.

The rule (:func:`severity`), for findings only (an *inconsistent* check, or one
*consistent only under* a reading the paper does not rule out):

=============  ===================================  ==============================
stakes         inconsistent                         consistent only under a reading
=============  ===================================  ==============================
headline       critical if it flips, else major     major if it flips, else minor
result         major                                minor
presentation   minor                                minor
=============  ===================================  ==============================

where *flips* (:func:`flips`) means that the primary reading's recomputed value is on
the other side of the printed one: of p = 0.05 for a test's p-value, of 0 for any
other quantity.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

#: Severity levels, most severe first.
LEVELS = ("critical", "major", "minor")
#: What a check's printed value can carry (its declared ``stakes``).
STAKES = ("headline", "result", "presentation")
#: Check kinds whose printed value is a test's p-value.
P_VALUE_KINDS = ("ttest", "paired_dz", "paired_t", "wilcoxon_signs", "binomial")
#: The significance level a printed p is read against.
ALPHA = 0.05
#: The verdict classes that are findings.
FINDINGS = ("inconsistent", "conditional")


def flips(kind: str, printed: float | None, recomputed: float | None) -> bool:
    """Whether ``recomputed`` turns the printed claim around: for a p-value
    (:data:`P_VALUE_KINDS`) one side of :data:`ALPHA` against the other (``p < 0.05`` is
    significant); for any other quantity a strict change of sign (0 counts as neither
    side). False when either value is unknown (None).

    >>> flips("binomial", 0.035, 0.0703), flips("arithmetic", 6.0, 5.0)
    (True, False)
    """
    if printed is None or recomputed is None:
        return False
    if kind in P_VALUE_KINDS:
        return (printed < ALPHA) != (recomputed < ALPHA)
    return printed * recomputed < 0


def severity(verdict_class: str, stakes: str, flipped: bool) -> str | None:
    """The severity level of a finding by the table of this module's docstring; None
    for a check that is no finding (consistent, not recomputable)."""
    if stakes not in STAKES:
        raise ValueError(f"stakes {stakes!r} is not one of {STAKES}")
    if verdict_class not in FINDINGS:
        return None
    inconsistent = verdict_class == "inconsistent"
    if stakes == "headline":
        if flipped:
            return "critical" if inconsistent else "major"
        return "major" if inconsistent else "minor"
    return "major" if stakes == "result" and inconsistent else "minor"


def ranked(items: Sequence, level_of) -> list:
    """``items`` with a severity (``level_of(item)`` not None), most severe first; the
    order within a level is kept."""
    order = {lv: i for i, lv in enumerate(LEVELS)}
    found = [x for x in items if level_of(x) is not None]
    return sorted(found, key=lambda x: order[level_of(x)])


def counts(levels: Iterable[str | None]) -> dict[str, int]:
    """Findings per level, in :data:`LEVELS` order (None, no finding, is not counted)."""
    out = {lv: 0 for lv in LEVELS}
    for lv in levels:
        if lv is not None:
            out[lv] += 1
    return out
