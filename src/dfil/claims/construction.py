"""Claims that hold by construction: reported as such, never tested, counted apart
(pure).

A contrast the paper draws between a quantity its method fixes by definition and another
(the MF path's entailment from ordered centers is 100 by definition; nearest-center labels
on a proportion grid never violate order, Theorem 1) is no finding a grid can reproduce:
it is declared with why it holds (``construction:`` of an effect in
``config/tables.yaml``) and judged *by construction*, its reason saying what the runs
measured and whether that has the paper's direction; it is counted in no Holm family.
Where the paper compares the quantity with another method, the same comparison measured
on the same items is a claim of its own, tested as any other.
"""

from __future__ import annotations

from dfil.claims.declare import Declared
from dfil.claims.evidence import Evidence

#: The verdict of a claim that holds by construction.
BY_CONSTRUCTION = "by construction"


def construction_verdict(claim: Declared, ev: Evidence | None) -> tuple[str, str]:
    """(verdict, reason) of a by-construction ``claim`` (its ``construction`` set) on
    evidence ``ev``: *not run* without one, *not comparable* where the paper prints no
    value, *by construction* otherwise, the reason saying what the runs measured and
    whether it has the paper's direction (a side that is no evidence named: one class or
    at chance, :func:`dfil.render.voiding.sides_degenerate`)."""
    if ev is None:
        return "not run", "the grid has no run for one side"
    if claim.paper is None:
        return "not comparable", "the paper prints no value for one side"
    sign = (claim.paper > 0) - (claim.paper < 0)
    held = ev.estimate * sign > 0 or (sign == 0 and ev.estimate == 0)
    measured = f"measured {ev.estimate:+.3g} (paper {claim.paper:+.3g})"
    if not held:
        measured += ", not the paper's direction on these runs"
        measured += f" ({ev.degenerate})" if ev.degenerate else ""
    return BY_CONSTRUCTION, (f"holds by construction ({claim.construction}); {measured}; "
                             "no test, counted apart from reproduced")
