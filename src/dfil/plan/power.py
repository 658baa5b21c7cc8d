"""Seeds per side that give a claim's declared test a stated power (pure: the power is
:func:`dfil.stats.power`'s, the one function claims.csv's ``power_at_n`` and ``mde`` come
from).

The truth a plan assumes is the paper's: its printed difference, and the spread of that
difference from what it prints: the paper's d_z where it prints one (the differences' sd
is |Δ| / d_z); else, for paired seeds, the differences' sd sqrt(s_a^2 + s_b^2) (no
correlation between the sides assumed); for Welch's, the root mean square of the two
sides' stds (Cohen's d with equal n a side); for a one-sample test of per-seed
differences, their printed std. The test is the verdict's: two-sided at the family's
level counted in the paper's direction, or TOST with the claim's margin for a parity.
The level is the family's Bonferroni bound alpha / m (:func:`dfil.stats.family_alpha`;
m: the claims of the family a plan considers that can carry a p), under which a claim
keeps its power whatever Holm's step-down does with the rest of the family.

A claim whose spread the paper does not print is planned at :data:`UNKNOWN_SEEDS` seeds;
one that needs more than :data:`MAX_SEEDS` is not plannable at any budget. Method: Cohen,
*Statistical Power Analysis for the Behavioral Sciences* (1988), ch. 2; for seeds in
ML, Colas et al., "How Many Random Seeds?" (2018).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dfil import stats
from dfil.stats.power import MIN_N

#: The most seeds a side the planner will ask for: twice the paper's largest seed set
#: (21); beyond it, run-to-run noise swamps the claimed effect for any budget of this grid.
MAX_SEEDS = 40
#: A t-test needs two values a side.
MIN_SEEDS = MIN_N
#: Seeds a side for a claim whose spread the paper does not print (the paper's default).
UNKNOWN_SEEDS = 3
#: How far past :data:`MAX_SEEDS` a plan looks to say what an unplannable claim needs.
MOST_SEEDS = 100 * MAX_SEEDS


@dataclass(frozen=True)
class Need:
    """Seeds a side a claim needs: ``seeds`` (None: more than ``MAX_SEEDS``, see
    ``beyond``), how that was found (``analytic`` or ``spread unknown``), and the power
    reached at ``seeds``."""

    seeds: int | None
    method: str
    power: float | None = None
    beyond: int | None = None
    """Where ``seeds`` is None: the seeds it would need (None: none up to
    :data:`MOST_SEEDS`, or never)."""

    @property
    def message(self) -> str:
        if self.seeds is not None:
            return f"{self.seeds}"
        n = f"{self.beyond}" if self.beyond else f"more than {MAX_SEEDS}"
        return f"needs {n} seeds a side: not plannable"


def trial_of(claim) -> stats.Trial | None:
    """The declared test of ``claim`` (:class:`dfil.plan.claims.PaperClaim`) with the
    paper's spread (module doc); None where the paper prints none."""
    if not claim.spread_known or claim.effect is None:
        return None
    if claim.design == "paired" and claim.dz is not None:
        sd = abs(claim.effect) / claim.dz
    else:
        sds = [s.std for s in claim.sides]
        if claim.design == "paired":
            sd = math.sqrt(sum(s * s for s in sds))
        elif claim.design == "welch":
            sd = math.sqrt(sum(s * s for s in sds) / len(sds))
        else:
            sd = sds[0]
    return stats.Trial(claim.design, sd, claim.margin)


def family_sizes(claims: Sequence) -> dict[str, int]:
    """Per family, the claims of ``claims`` that can carry a p (nothing stops a test:
    ``why_not`` is empty): the m of the family's Bonferroni level."""
    out: dict[str, int] = {}
    for c in claims:
        out[c.family] = out.get(c.family, 0) + (not c.why_not)
    return out


def power_at(claim, n: int, alpha: float) -> float:
    """The power of ``claim``'s test at ``n`` seeds a side and level ``alpha``, if the
    truth is the paper's effect and spread (the spread must be known)."""
    trial = trial_of(claim)
    if trial is None:
        raise ValueError(f"claim {claim.id}: the paper prints no spread to compute power from")
    return stats.power(trial, claim.effect, n, alpha)


def seeds_needed(claim, alpha: float = 0.05, power: float = 0.8) -> Need:
    """Seeds a side for ``claim``'s test to reach its claim (the paper's direction, or
    equivalence within its margin) with probability ``power`` at level ``alpha`` (the
    family's), when the truth is the paper's effect and spread."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie in (0, 1), got {alpha} and {power}")
    trial = trial_of(claim)
    if trial is None:
        return Need(UNKNOWN_SEEDS, "spread unknown")
    n = stats.n_for_power(trial, claim.effect, alpha, power, MOST_SEEDS)
    if n is not None and n <= MAX_SEEDS:
        return Need(n, "analytic", stats.power(trial, claim.effect, n, alpha))
    return Need(None, "analytic", beyond=n)
