"""What the grid that ran can show of each claim (pure: numpy, scipy, statsmodels): the
power its declared test had at the seeds that ran, given the paper's printed effect and
spread, and its minimum detectable effect (MDE) at that n; for a grid ``dfil grid plan``
wrote, also whether the plan took the claim.

The claims are :func:`dfil.plan.claims.ran_claims`, so each side's n is the seeds that
ran; with unequal sides the smaller n is used, so the power is a lower bound. Power is
:mod:`dfil.plan.power`'s (closed form, or a seeded simulation for TOST). The MDE is the
smallest |Δ| the test detects with power ``power`` at level ``alpha``: statsmodels'
``solve_power`` for Cohen's d (``TTestIndPower`` for two sides, ``TTestPower`` for one
side's or paired differences), times the std :func:`dfil.plan.power.effect_sd` divides by;
for a parity (TOST) it is the two-sided Welch MDE, the smallest difference those seeds
would have told from none.
"""

from __future__ import annotations

from dataclasses import dataclass

from statsmodels.stats.power import TTestIndPower, TTestPower

from dfil.plan.claims import PaperClaim
from dfil.plan.power import MIN_SEEDS, Trial, analytic_power, effect_sd, simulated_power
from dfil.plan.table import recorded_coverage

#: The level and power of the MDE and of the power shown where no plan sets them.
ALPHA, POWER = 0.05, 0.8


@dataclass(frozen=True)
class Achieved:
    """One claim on the grid that ran: ``n`` seeds a side (the smaller side), the
    ``power`` its test had and its ``mde`` (None, with ``why``, where they cannot be
    found), and ``planned`` (None: the grid has no plan block)."""

    n: int
    power: float | None
    mde: float | None
    why: str = ""
    planned: bool | None = None


def power_at(claim: PaperClaim, n: int, alpha: float = ALPHA) -> float:
    """The power of ``claim``'s test at ``n`` seeds a side, if the truth is the paper's
    effect and spread (the spread must be printed)."""
    trial = Trial(claim.test, claim.effect, tuple(s.std for s in claim.sides), claim.margin)
    p = analytic_power(trial, n, alpha)
    return simulated_power(trial, n, alpha, seed=n) if p is None else p


def mde_at(claim: PaperClaim, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest |Δ| ``claim``'s test detects at ``n`` seeds a side with probability
    ``power`` at level ``alpha``, in the claim's units (the paper's spread printed)."""
    test = "welch" if claim.test == "tost" else claim.test
    sd = effect_sd(tuple(s.std for s in claim.sides), test)
    if sd == 0:
        return 0.0
    if test == "welch":
        d = TTestIndPower().solve_power(None, nobs1=n, alpha=alpha, power=power, ratio=1.0)
    else:
        d = TTestPower().solve_power(None, nobs=n, alpha=alpha, power=power)
    return float(d) * sd


def achieved(claim: PaperClaim, alpha: float = ALPHA, power: float = POWER,
             planned: bool | None = None) -> Achieved:
    """``claim`` (sides with the seeds that ran) at level ``alpha``, its MDE at ``power``."""
    n = min((s.n for s in claim.sides), default=0)
    why = (claim.why_not or ("no seeds ran" if not claim.sides else "")
           or ("" if claim.spread_known else "spread unknown")
           or ("" if n >= MIN_SEEDS else f"n={n}: fewer than {MIN_SEEDS} seeds a side"))
    if why:
        return Achieved(n, None, None, why, planned)
    return Achieved(n, power_at(claim, n, alpha), mde_at(claim, n, alpha, power), "", planned)


@dataclass(frozen=True)
class Standings:
    """:func:`achieved` of each claim by id, and the coverage line of the plan that wrote
    the grid ("" where none did)."""

    claims: dict[str, Achieved]
    coverage: str = ""


def standings(claims: list[PaperClaim], record=None) -> Standings:
    """:func:`achieved` of each claim at the level and power of the grid's ``plan:`` block
    ``record`` (:class:`dfil.gridfile.PlanRecord`; None: no plan, and :data:`ALPHA`,
    :data:`POWER`), saying whether the plan took each."""
    if record is None:
        return Standings({c.id: achieved(c) for c in claims})
    taken = set(record.claims)
    return Standings({c.id: achieved(c, record.alpha, record.power, c.id in taken)
                      for c in claims}, recorded_coverage(record))
