"""The paper's claims and a verdict on each (pure).

A claim is an effect the paper reports: every published signed (Δ) entry of a table and
every contrast a table declares under ``effects:`` in ``config/tables.yaml`` (entry a
minus entry b); the headline table's findings are signed entries of Table 2. Verdicts:

- *reproduced*: the sign is the paper's and the seeds establish it (a t-test, p < 0.05;
  for a parity, the difference's 95% interval inside ±tol), and the paper's difference
  lies inside the reproduced difference's 95% interval; on a comparable grid only.
- *direction only*: the sign is the paper's, not its size (or the size cannot be compared
  on a stand-in grid, or the seeds do not establish the sign: the reason says which).
- *not reproduced*: the reproduced sign is not the paper's.
- *not comparable*: the paper prints no value for one side, or the comparison is void
  on this grid by construction (DFIL's main classifier against fine-tune on a frozen
  backbone: :mod:`dfil.render.void`).
- *not run*: the grid has no run for one side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from dfil.render.direction import TOL, direction
from dfil.render.entries import Entry, Table
from dfil.render.fmt import parse_published
from dfil.render.void import REASON as VOID
from dfil.render.void import same_model

#: Each verdict and when a claim gets it (shown on the report's entry page).
VERDICTS = {
    "reproduced": "the sign is the paper's and the seeds establish it (t-test p < 0.05; "
                  "for a parity, the 95% interval inside ±tol), and the paper's Δ lies "
                  "inside the reproduced Δ's 95% interval (comparable grids only)",
    "direction only": "the sign is the paper's but not its size, or the size cannot be "
                      "compared (stand-in grid), or the seeds do not establish the sign",
    "not reproduced": "the reproduced sign is not the paper's (|Δ| below tol counts as 0)",
    "not comparable": "the paper prints no value for one side, or the comparison is void "
                      "on this grid by construction (the reason says why)",
    "not run": "the grid has no run for one side",
}
ALPHA = 0.05
#: What a grid a budget plan wrote says of a claim the plan did not take: not a failure.
NOT_PLANNED = "not planned at this budget"


@dataclass(frozen=True)
class Claim:
    """One effect of the paper with its verdict; ``entries``: the (row, column) pairs it
    is computed from, for links into the table."""

    table: str
    label: str
    paper: float | None
    reproduced: float | None
    test: str
    pvalue: float | None
    interval: tuple[float, float] | None
    verdict: str
    reason: str
    entries: tuple[tuple[str, str], ...]

    @property
    def id(self) -> str:
        return claim_id(self.table, self.label, self.entries)


def claim_id(table: str, label: str, entries: tuple[tuple[str, str], ...]) -> str:
    """A claim's id, the same on every grid: a signed entry by its ids (``T5:row/col``),
    a declared effect by its label with no spaces or commas (``T2:uniform-effect``;
    ``dfil grid plan --claims`` splits on commas)."""
    if len(entries) == 1:
        row, col = entries[0]
        return f"{table}:{row}/{col}"
    return f"{table}:" + re.sub(r"[^a-z0-9.]+", "-", label.lower()).strip("-")


@dataclass(frozen=True)
class SeedTest:
    """A reproduced difference with its test on the seeds (p and 95% interval None with
    fewer than two seeds a side)."""

    value: float | None
    test: str
    pvalue: float | None
    interval: tuple[float, float] | None


def _values(entry: Entry | None) -> np.ndarray:
    if entry is None or entry.kind != "stat":
        return np.array([])
    return np.asarray(entry.values, dtype=float)


def _untestable(n: int) -> str:
    return ("one value: no test on seeds" if n < 2
            else f"n={n}, every seed equal: no test")


def seed_test_signed(entry: Entry | None) -> SeedTest:
    """A signed entry's mean against 0: a difference of two entries (its ``sides``) by
    Welch's t-test on their seeds (:func:`seed_test_contrast`), else a one-sample t-test
    on its per-seed values."""
    if entry is None or entry.mean is None:
        return SeedTest(None, "", None, None)
    if entry.sides:
        return seed_test_contrast(*entry.sides)
    x = _values(entry)
    if x.size < 2 or np.ptp(x) == 0:
        return SeedTest(entry.mean, _untestable(x.size), None, None)
    r = sps.ttest_1samp(x, 0.0)
    ci = r.confidence_interval(0.95)
    return SeedTest(float(x.mean()), f"one-sample t, n={x.size}", float(r.pvalue),
                  (float(ci.low), float(ci.high)))


def seed_test_contrast(a: Entry | None, b: Entry | None) -> SeedTest:
    """Entry a minus entry b: Welch's t-test on their per-seed values."""
    if a is None or b is None or a.mean is None or b.mean is None:
        return SeedTest(None, "", None, None)
    x, y = _values(a), _values(b)
    if min(x.size, y.size) >= 2 and np.ptp(x) == 0 and np.ptp(y) == 0:
        # every seed the same on both sides: the difference is exact (T3's self-consistent
        # oracle, 100 against 100), its interval a point; no t-test
        d = a.mean - b.mean
        return SeedTest(d, _untestable(min(x.size, y.size)), None, (d, d))
    if min(x.size, y.size) < 2:
        return SeedTest(a.mean - b.mean, _untestable(min(x.size, y.size)), None, None)
    r = sps.ttest_ind(x, y, equal_var=False)
    ci = r.confidence_interval(0.95)
    return SeedTest(float(x.mean() - y.mean()), f"Welch t, n={x.size} vs {y.size}",
                  float(r.pvalue), (float(ci.low), float(ci.high)))


def _established(paper_dir: str, t: SeedTest, tol: float) -> bool:
    if t.interval is None:
        return False
    if paper_dir == "0":
        return -tol < t.interval[0] and t.interval[1] < tol
    return t.pvalue is not None and t.pvalue < ALPHA


#: A direction (:func:`dfil.render.direction.direction`) in words.
_SIGN = {"+": "positive", "-": "negative", "0": "no effect"}


def verdict(paper: float | None, t: SeedTest, tol: float, standin: bool) -> tuple[str, str]:
    """(verdict, reason) for a claim whose paper difference is ``paper``."""
    if t.value is None:
        return "not run", "the grid has no run for one side"
    if paper is None:
        return "not comparable", "the paper prints no value for one side"
    pd, rd = direction(paper, tol), direction(t.value, tol)
    if pd != rd:
        return "not reproduced", (f"reproduced Δ {_SIGN[rd]}, the paper's {_SIGN[pd]} "
                                  f"(|Δ| < {tol:g} counts as no effect)")
    if not _established(pd, t, tol):
        why = (f"not established by the seeds (p = {t.pvalue:.3g})" if t.pvalue is not None
               else t.test or "no test on the seeds")
        return "direction only", f"sign as the paper's, {why}"
    if standin:
        return "direction only", ("sign as the paper's and established; size not comparable "
                                  "on a stand-in grid")
    lo, hi = t.interval
    if lo <= paper <= hi:
        return "reproduced", "sign established; the paper's Δ inside the 95% interval"
    return "direction only", (f"sign established; the paper's Δ {paper:g} outside "
                              f"[{lo:.3g}, {hi:.3g}]")


def _published(table: Table, row: str, col: str) -> float | None:
    value = table.published.get((row, col))
    return None if value is None else parse_published(value)[0]


def _reads(table: Table, entries) -> frozenset:
    found = (table.entry(row, col) for row, col in entries)
    return frozenset().union(*(e.reads for e in found if e is not None))


def table_claims(table: Table, standin: bool, name_of=None,
                 frozen: frozenset[str] = frozenset()) -> list[Claim]:
    """Every claim of one table: its signed entries, then its declared effects.
    ``name_of(row, col)`` names a signed entry (default: its ids); ``frozen``: the run
    keys that train no adapter (a claim of DFIL's main classifier against fine-tune on
    those alone is not comparable, :func:`dfil.render.void.same_model`)."""
    name = f"T{table.number}"
    name_of = name_of or (lambda row, col: f"{row} / {col}")
    found = []
    for row, col in table.signed:
        found.append((name_of(row, col), _published(table, row, col),
                      seed_test_signed(table.entry(row, col)), TOL, ((row, col),)))
    for e in table.effects:
        sides = [tuple(str(e[s]).split("/")) for s in ("a", "b")]
        pubs = [_published(table, *s) for s in sides]
        paper = None if None in pubs else pubs[0] - pubs[1]
        found.append((e["label"], paper,
                      seed_test_contrast(table.entry(*sides[0]), table.entry(*sides[1])),
                      float(e.get("tol", TOL)), tuple(sides)))
    out = []
    for label, paper, t, tol, entries in found:
        v, reason = verdict(paper, t, tol, standin)
        if v != "not run" and same_model(_reads(table, entries), frozen):
            v, reason = "not comparable", VOID
        out.append(Claim(name, label, paper, t.value, t.test, t.pvalue, t.interval, v,
                         reason, entries))
    return out


def verdict_counts(claims: list[Claim]) -> dict[str, int]:
    """How many claims fall under each verdict (:data:`VERDICTS`, in order)."""
    return {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
