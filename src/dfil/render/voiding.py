"""Which findings on a table's entries make a difference of them no evidence: one rule
for a table's Δ and a claim (:mod:`dfil.claims.evidence`) (pure: numpy).

An entry's ``degenerate`` reason (:mod:`dfil.claims.degenerate`, found when its table was
resolved) lists its findings. A run predicting one class for every item and a mean at or
below its set's chance or majority-class rate void every difference the entry enters;
identical predictions and zero variance across seeds are facts about one side's spread,
and a difference is judged on its own: where the sides pair by seed, on its per-seed
differences, void only when they are all equal.
"""

from __future__ import annotations

import numpy as np

#: How the findings open that void any difference an entry enters (the words of
#: :mod:`dfil.claims.degenerate`).
ONE_CLASS, AT_CHANCE = "one class for all", "at chance"


def voiding(reason: str) -> str:
    """The parts of an entry's degenerate ``reason`` that make any comparison with it no
    evidence (:data:`ONE_CLASS`, :data:`AT_CHANCE`), "" when none does."""
    parts = [p for p in reason.split("; ") if p.startswith((ONE_CLASS, AT_CHANCE))]
    return "; ".join(parts)


def _constant_difference(sides) -> str:
    """"every seed gives the same difference" for two stat entries on the same two or
    more seeds whose per-seed differences are all equal; "" otherwise."""
    a, b = sides
    if a is None or b is None or a.kind != "stat" or b.kind != "stat":
        return ""
    if len(a.seeds) != len(a.values) or len(b.seeds) != len(b.values):
        return ""
    sa, sb = dict(zip(a.seeds, a.values, strict=True)), dict(zip(b.seeds, b.values, strict=True))
    if len(sa) < 2 or set(sa) != set(sb):
        return ""
    diffs = np.array([sa[s] - sb[s] for s in sorted(sa)], dtype=float)
    return "every seed gives the same difference" if np.ptp(diffs) == 0 else ""


def sides_degenerate(sides) -> str:
    """Why a difference of ``sides`` (a, b) is degenerate (one rule for a table's Δ and
    a claim, :mod:`dfil.claims.evidence`): a side that predicts one class or lies at
    chance (:func:`voiding`, named a or b), or, where the sides pair by seed, per-seed
    differences that are all equal; "" otherwise. A side with zero variance or identical
    predictions across seeds is no reason by itself: the difference has its own spread."""
    found = [f"{name}: {why}" for name, s in zip("ab", sides, strict=False)
             if s is not None and (why := voiding(s.degenerate))]
    if len(sides) == 2 and (same := _constant_difference(sides)):
        found.append(same)
    return "; ".join(found)
