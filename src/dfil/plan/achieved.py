"""What the grid that ran can show of each claim (pure: numpy, scipy, statsmodels): the
power its declared test had at the seeds that ran, given the paper's printed effect and
spread; for a grid ``dfil grid plan`` wrote, also whether the plan took the claim.

The claims are :func:`dfil.plan.claims.ran_claims`, the distinct claims of ``claims.csv``
by its ids, so each side's n is the seeds that ran; with unequal sides the smaller n is
used, so the power is a lower bound. Power is :func:`dfil.plan.power.power_at`'s (the
planner's: :func:`dfil.stats.power` for the claim's declared test, at its family's
Bonferroni level). The minimum detectable effect at that n is computed by
:mod:`dfil.claims.judge` from the seeds' spread with the same function (``claims.csv``'s
``mde``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dfil.plan.claims import PaperClaim
from dfil.plan.power import MIN_SEEDS, family_sizes, power_at
from dfil.plan.table import recorded_coverage
from dfil.stats import family_alpha

#: The level of the power shown where no plan sets it.
ALPHA = 0.05


@dataclass(frozen=True)
class Achieved:
    """One claim on the grid that ran: ``n`` seeds a side (the smaller side), the
    ``power`` its test had (None, with ``why``, where it cannot be found), and ``planned``
    (None: the grid has no plan block)."""

    n: int
    power: float | None
    why: str = ""
    planned: bool | None = None


def achieved(claim: PaperClaim, alpha: float = ALPHA,
             planned: bool | None = None) -> Achieved:
    """``claim`` (sides with the seeds that ran) at level ``alpha`` (its family's)."""
    n = min((s.n for s in claim.sides), default=0)
    why = (claim.why_not or ("no seeds ran" if not claim.sides else "")
           or ("" if claim.spread_known else "spread unknown")
           or ("" if n >= MIN_SEEDS else f"n={n}: fewer than {MIN_SEEDS} seeds a side"))
    if why:
        return Achieved(n, None, why, planned)
    return Achieved(n, power_at(claim, n, alpha), "", planned)


@dataclass(frozen=True)
class Standings:
    """:func:`achieved` of each claim by id, and the coverage line of the plan that wrote
    the grid ("" where none did)."""

    claims: dict[str, Achieved]
    coverage: str = ""


def standings(claims: list[PaperClaim], record=None) -> Standings:
    """:func:`achieved` of each claim at its family's Bonferroni level
    (:func:`dfil.plan.power.family_sizes` of ``claims``) under the alpha of the grid's
    ``plan:`` block ``record`` (:class:`dfil.config.gridfile.PlanRecord`; None: no plan,
    and :data:`ALPHA`), saying whether
    the plan took each: by its id or the id of any place it is printed at (a plan made
    where two places' runs differed may name either)."""
    sizes = family_sizes(claims)
    if record is None:
        return Standings({c.id: achieved(c, family_alpha(ALPHA, sizes[c.family]))
                          for c in claims})
    taken = set(record.claims)
    return Standings({c.id: achieved(c, family_alpha(record.alpha, sizes[c.family]),
                                     bool(taken & {c.id, *c.places}))
                      for c in claims}, recorded_coverage(record))
