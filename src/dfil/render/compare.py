"""The comparison rule for one printed number, a level that is no claim (pure).

A published number lies *inside* the 95% t-interval of the reproduced mean over its n
seeds (mean ± t(0.975, n-1)·s/√n), widened by half a unit of the paper's last printed
digit (the paper's own rounding), or outside it. Outside is *contradicted* (a two-sided
t-test against the paper's value at p < 0.05, where the rounding allows it); inside is
*inconclusive* (consistent with the paper's value, which nothing establishes). With fewer
than two seeds there is no interval: the number is judged by :data:`TOLERANCE` in the
table's units. On a stand-in grid (another backbone or data in the paper's place)
absolute levels, counts and sizes are *not comparable* (they differ on purpose); the
paper's effects are the claims (:mod:`dfil.claims`), whose verdicts a claim's own
number carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
from scipy import stats as sps

#: Tolerance (the table's units) for a number without a seed interval.
TOLERANCE = 0.5
RULE = ("A number the paper prints that is no claim (a level) is contradicted when the "
        "paper's value lies outside the 95% t-interval of the reproduced mean over its n "
        "seeds, mean ± t(0.975, n−1)·s/√n, widened by half a unit of the paper's last "
        "printed digit, and inconclusive inside it (consistent, not established); with "
        f"fewer than two seeds it is judged by a tolerance of ±{TOLERANCE:g} in the table's "
        "units. On a stand-in grid, absolute levels, counts and dataset sizes are not "
        "comparable by design. A number that is a claim (a Δ the paper prints) carries its "
        "claim's verdict.")


#: Entry formats that are not levels: never judged number by number.
NOT_LEVELS = {"p": "a p-value: depends on n and the spread; its effect is a claim",
              "n": "a count of seeds", "int": "a count"}


def comparable(fmt: str, standin: str) -> str | None:
    """None, or why an entry of format ``fmt`` cannot be compared on this grid
    (``standin``: what the grid runs in the paper's place, "" for the paper's grid)."""
    if fmt in NOT_LEVELS:
        return NOT_LEVELS[fmt]
    return "stand-in grid: levels differ on purpose" if standin else None


@dataclass(frozen=True)
class NumberVerdict:
    """A number's verdict (one of :data:`dfil.claims.VERDICTS`' words) and what it was
    judged by."""

    verdict: str
    basis: str
    lo: float | None = None
    hi: float | None = None


def t_interval(values, level: float = 0.95) -> tuple[float, float] | None:
    """The ``level`` t-interval of the mean of ``values`` (shape (n,)); None for n < 2."""
    x = np.asarray(values, dtype=float)
    if x.size < 2:
        return None
    half = sps.t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def half_digit(printed) -> float:
    """Half a unit of the last digit ``printed`` shows: "48.0" -> 0.05, 51 -> 0.5."""
    text = str(printed).split("±")[0].strip().rstrip("%")
    try:
        exponent = Decimal(text).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return 0.5 * 10.0 ** exponent if isinstance(exponent, int) else 0.0


def judge(paper: float | None, printed, values, mean: float | None,
          comparable: str | None) -> NumberVerdict:
    """The verdict on one published number. ``values``: the reproduced per-seed values
    (shape (n,), empty for a single value ``mean``); ``comparable``: None, or why the
    number cannot be compared on this grid."""
    if mean is None:
        return NumberVerdict("not run", "no run of this grid prints it")
    if comparable is not None:
        return NumberVerdict("not comparable", comparable)
    slack = half_digit(printed)
    interval = t_interval(values)
    if interval is None:
        lo, hi = mean - TOLERANCE, mean + TOLERANCE
        basis = f"one value: tolerance ±{TOLERANCE:g}"
    else:
        lo, hi = interval
        basis = f"95% t-interval, n={len(values)}"
    inside = lo - slack <= paper <= hi + slack
    if inside:
        return NumberVerdict("inconclusive", f"{basis}: the paper's value inside", lo, hi)
    return NumberVerdict("contradicted", f"{basis}: the paper's value outside", lo, hi)
