"""What the grid that ran can show of each claim (pure: numpy, scipy, statsmodels): the
power its declared test had at the seeds that ran, given the paper's printed effect and
spread; for a grid ``dfil grid plan`` wrote, also whether the plan took the claim.

The claims are :func:`dfil.plan.claims.ran_claims`, the distinct claims of ``claims.csv``
by its ids, so each side's n is the seeds that ran; with unequal sides the smaller n is
used, so the power is a lower bound. Power is :mod:`dfil.plan.power`'s (closed form, or a
seeded simulation for TOST). The minimum detectable effect at that n is computed once, by
:mod:`dfil.claims.evidence` from the seeds' spread (``claims.csv``'s ``mde``).
"""

from __future__ import annotations

from dataclasses import dataclass

from dfil.plan.claims import PaperClaim
from dfil.plan.power import MIN_SEEDS, Trial, analytic_power, simulated_power
from dfil.plan.table import recorded_coverage

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


def power_at(claim: PaperClaim, n: int, alpha: float = ALPHA) -> float:
    """The power of ``claim``'s test at ``n`` seeds a side, if the truth is the paper's
    effect and spread (the spread must be printed)."""
    trial = Trial(claim.test, claim.effect, tuple(s.std for s in claim.sides), claim.margin)
    p = analytic_power(trial, n, alpha)
    return simulated_power(trial, n, alpha, seed=n) if p is None else p


def achieved(claim: PaperClaim, alpha: float = ALPHA,
             planned: bool | None = None) -> Achieved:
    """``claim`` (sides with the seeds that ran) at level ``alpha``."""
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
    """:func:`achieved` of each claim at the level of the grid's ``plan:`` block ``record``
    (:class:`dfil.config.gridfile.PlanRecord`; None: no plan, and :data:`ALPHA`), saying whether
    the plan took each: by its id or the id of any place it is printed at (a plan made
    where two places' runs differed may name either)."""
    if record is None:
        return Standings({c.id: achieved(c) for c in claims})
    taken = set(record.claims)
    return Standings({c.id: achieved(c, record.alpha, bool(taken & {c.id, *c.places}))
                      for c in claims}, recorded_coverage(record))
