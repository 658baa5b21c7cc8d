"""The verdict rule: one outcome per claim from its declared test (pure).

A claim is *reproduced* when its declared test (:mod:`dfil.claims.evidence`) gives
p_holm < 0.05, *contradicted* when the test the other way does (an effect of the
opposite sign, or a parity established against a claimed difference; or, for a
parity, a difference beyond its margin), and *inconclusive* otherwise, saying the
smallest effect the grid could have detected. p-values are Holm-adjusted within the
claim's family (:data:`FAMILIES`). Runs that carry no evidence (degenerate:
:mod:`dfil.claims.degenerate`) make a claim *not comparable* and count in no family,
as does a paper that prints no value for one side; a side with no run makes it *not
run*.
"""

from __future__ import annotations

from collections.abc import Sequence

from statsmodels.stats.multitest import multipletests

from dfil.claims.evidence import ALPHA, POWER, Evidence

#: Each verdict and when a claim gets it, in the order every page counts them.
VERDICTS = {
    "reproduced": "the claim's declared test, in the paper's direction (or TOST for a "
                  "parity, with its stated margin), gives p_holm < 0.05",
    "by construction": "the claim holds by the method's definition (a theorem or a "
                       "definition the paper states; the reason names it) and the runs "
                       "show it: no finding, no test, counted apart from reproduced and "
                       "in no family's Holm adjustment",
    "contradicted": "the test the other way gives p_holm < 0.05: an effect of the "
                    "opposite sign, a parity established against a claimed difference, or "
                    "a difference beyond the margin of a claimed parity",
    "inconclusive": "there is data, but neither test reaches p_holm < 0.05: the reason "
                    "says the smallest effect this grid could detect (power 0.8)",
    "not comparable": "the paper prints no value for one side, or the runs are no "
                      "evidence: a side at or below its set's chance or majority-class "
                      "rate (at chance), a run predicting one class for every item, or "
                      "a difference with no spread (every seed the same difference; "
                      "degenerate), never counted in any family's Holm adjustment",
    "not run": "the grid has no run for one side",
}
#: The families within which p is Holm-adjusted.
FAMILIES = {
    "primary": "the abstract's and the main tables' claims (Tables 1-7)",
    "exploratory": "every other table's claims, adjusted among themselves",
}
#: What a stand-in grid can and cannot establish, in one sentence.
STANDIN = ("A stand-in grid can establish whether each effect has the paper's direction "
           "(or parity) on the stand-in model and data; it cannot establish the paper's "
           "sizes or levels, which differ on purpose, so no size is compared.")
#: Why a claim has no run on a grid ``dfil grid plan`` wrote when the plan did not take it:
#: the budget bought no runs for it, which is no failure and nothing against the paper.
NOT_PLANNED = "not planned at this budget"
#: Said of a stand-in grid's reproduced or contradicted claim.
STANDIN_REASON = "stand-in grid: the direction, not the paper's size"


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted ``pvalues`` (None stays None and counts for nothing)."""
    known = [i for i, p in enumerate(pvalues) if p is not None]
    out: list[float | None] = [None] * len(pvalues)
    if known:
        adjusted = multipletests([pvalues[i] for i in known], method="holm")[1]
        for i, p in zip(known, adjusted, strict=True):
            out[i] = float(p)
    return out


def holm_by_family(pvalues: Sequence[float | None], families: Sequence[str]) -> list:
    """Holm-adjusted ``pvalues``, each within its family (``families``, the same order)."""
    out: list[float | None] = [None] * len(pvalues)
    for family in dict.fromkeys(families):
        idx = [i for i, f in enumerate(families) if f == family]
        for i, p in zip(idx, holm([pvalues[i] for i in idx]), strict=True):
            out[i] = p
    return out


def mde_words(mde: float | None) -> str:
    if mde is None:
        return "fewer than two seeds a side: this grid can detect no effect"
    return (f"this grid cannot detect an effect smaller than {mde:.3g} points (alpha "
            f"{ALPHA:g}, power {POWER:g}, this n and spread)")


def decide(paper: float | None, ev: Evidence | None, p_for: float | None,
           p_against: float | None) -> tuple[str, str]:
    """(verdict, reason) of a claim whose paper value is ``paper``; ``p_for`` and
    ``p_against``: the Holm-adjusted p of its declared test and of the test the other
    way."""
    if ev is None:
        return "not run", "the grid has no run for one side"
    if paper is None:
        return "not comparable", "the paper prints no value for one side"
    if ev.degenerate:
        return "not comparable", ev.degenerate
    if p_for is None:
        return "inconclusive", f"{ev.test}: no test on one value a side; {mde_words(None)}"
    if p_for < ALPHA:
        return "reproduced", f"{ev.test}: p_holm = {p_for:.3g} < {ALPHA:g}"
    if p_against is not None and p_against < ALPHA:
        return "contradicted", (f"{ev.test} not established (p_holm = {p_for:.3g}); "
                                f"{ev.against} gives p_holm = {p_against:.3g} < {ALPHA:g}")
    return "inconclusive", (f"{ev.test}: p_holm = {p_for:.3g}; {opposite_words(paper, ev)}"
                            f"{mde_words(ev.mde)}")


def opposite_words(paper: float, ev: Evidence) -> str:
    """What an estimate of the sign opposite to the paper's says, with its 95% interval
    ("the estimate is opposite the paper's: -38 [-55.9, -20.1], its interval excludes
    0; "), "" for an estimate in the paper's direction or without an interval."""
    if ev.ci_low is None or ev.ci_high is None or paper == 0 or ev.estimate * paper >= 0:
        return ""
    excludes = ev.ci_low > 0 or ev.ci_high < 0
    return (f"the estimate is opposite the paper's ({paper:+.3g}): {ev.estimate:+.3g} "
            f"[{ev.ci_low:+.3g}, {ev.ci_high:+.3g}]"
            + (", its interval excludes 0" if excludes else "") + "; ")


def verdict_counts(rows: Sequence[dict]) -> dict[str, int]:
    """How many of ``rows`` (dicts with a ``verdict``) fall under each verdict."""
    return {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
