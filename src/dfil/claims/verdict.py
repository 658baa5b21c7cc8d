"""The verdict rule: one outcome per claim from its one p, adjusted once (pure).

Each claim has one test and one p (:mod:`dfil.claims.evidence`): two-sided for a
difference in a direction; for a parity, TOST within its margin, or a difference beyond
it. The p-values are Holm-adjusted once, within the claim's family (:data:`FAMILIES`;
:func:`dfil.stats.holm_by_family`). A claim is *reproduced* when p_holm < 0.05 and the
estimate lies on the paper's side (its sign; for a parity, within the margin),
*contradicted* when p_holm < 0.05 and it lies on the other, and *inconclusive*
otherwise, saying what the grid could have detected at its family's Bonferroni-bounded
level (:func:`dfil.stats.family_alpha`). As each claim has one p and a false verdict
needs its p_holm below 0.05, the familywise error of the verdicts of a family is at most
0.05. Runs that carry no evidence (degenerate: :mod:`dfil.claims.degenerate`) make a
claim *not comparable* and count in no family, as does a paper that prints no value for
one side; a side with no run makes it *not run*.
"""

from __future__ import annotations

from collections.abc import Sequence

from dfil import stats
from dfil.claims.evidence import ALPHA, POWER, Evidence

#: Each verdict and when a claim gets it, in the order every page counts them.
VERDICTS = {
    "reproduced": "the claim's one test (two-sided t for a direction; TOST with its stated "
                  "margin for a parity) gives p_holm < 0.05 with the estimate on the "
                  "paper's side: its sign, or within the margin",
    "by construction": "the claim holds by the method's definition (a theorem or a "
                       "definition the paper states; the reason names it) and the runs "
                       "show it: no finding, no test, counted apart from reproduced and "
                       "in no family's Holm adjustment",
    "contradicted": "the same test gives p_holm < 0.05 with the estimate on the other "
                    "side: the opposite sign, or a difference beyond a claimed parity's "
                    "margin",
    "inconclusive": "there is data, but p_holm >= 0.05: the reason says the smallest "
                    "effect this grid could detect (power 0.8 at the family's Bonferroni "
                    "level), or for a parity the seeds TOST needs",
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


def _level(alpha: float) -> str:
    return f"alpha {alpha:.3g}" + ("" if alpha == ALPHA else f" = {ALPHA:g}/{ALPHA / alpha:.0f}")


def detectable(ev: Evidence, paper: float | None, alpha: float) -> str:
    """What the grid could have shown of the claim of ``ev`` at level ``alpha`` (its
    family's Bonferroni-bounded level): a direction's minimum detectable effect at these
    seeds and their spread; a parity's margin and the seeds a side TOST needs when the
    true difference is the paper's ``paper``."""
    if ev.trial is None:
        return "fewer than two seeds a side: this grid can detect no effect"
    if ev.trial.parity:
        n = (None if paper is None
             else stats.n_for_power(ev.trial, paper, alpha, POWER))
        need = (f"needs {n} seeds a side" if n is not None
                else "cannot establish it at any n")
        return (f"TOST within the margin ±{ev.trial.margin:.3g} {need} for power {POWER:g} "
                f"({_level(alpha)}, a true difference of the paper's {paper:+g}, this "
                "spread)")
    m = mde(ev, alpha)
    if m is None:
        return "this grid can detect no effect at any size"
    return (f"this grid cannot detect an effect smaller than {m:.3g} points "
            f"({_level(alpha)}, power {POWER:g}, this n and spread)")


def mde(ev: Evidence | None, alpha: float) -> float | None:
    """The minimum detectable effect of a directional claim's test at these seeds
    (:func:`dfil.stats.mde` at ``alpha``, power 0.8); None for a parity, or with no
    test."""
    if ev is None or ev.trial is None or ev.trial.parity:
        return None
    return stats.mde(ev.trial, ev.n_a, alpha, POWER)


def decide(paper: float | None, ev: Evidence | None, p_holm: float | None,
           could: str = "") -> tuple[str, str]:
    """(verdict, reason) of a claim whose paper value is ``paper``, from its
    Holm-adjusted p ``p_holm``; ``could``: :func:`detectable`'s words for an
    inconclusive one."""
    if ev is None:
        return "not run", "the grid has no run for one side"
    if paper is None:
        return "not comparable", "the paper prints no value for one side"
    if ev.degenerate:
        return "not comparable", ev.degenerate
    if p_holm is None:
        return "inconclusive", f"{ev.test}: no test on one value a side; {could}".rstrip("; ")
    at = f"p_holm = {p_holm:.3g}"
    if p_holm >= ALPHA:
        return "inconclusive", (f"{ev.test}: {at}; {opposite_words(paper, ev)}"
                                f"{could}").rstrip("; ")
    interval = ("" if ev.ci_low is None
                else f" [{ev.ci_low:+.3g}, {ev.ci_high:+.3g}]")
    est = f"estimate {ev.estimate:+.3g}{interval}"
    if ev.margin is not None:
        if abs(ev.estimate) < ev.margin:
            return "reproduced", f"{ev.test}: {at} < {ALPHA:g}, {est} within ±{ev.margin:.3g}"
        return "contradicted", (f"{ev.test}: {at} < {ALPHA:g}, {est} beyond the margin "
                                f"±{ev.margin:.3g} of the claimed parity")
    if ev.estimate * paper > 0:
        return "reproduced", f"{ev.test}: {at} < {ALPHA:g}, {est} in the paper's direction"
    return "contradicted", f"{ev.test}: {at} < {ALPHA:g}, {est} against the paper's {paper:+g}"


def opposite_words(paper: float, ev: Evidence) -> str:
    """What an estimate of the sign opposite to the paper's says, with its 95% interval
    ("the estimate is opposite the paper's: -38 [-55.9, -20.1], its interval excludes
    0; "), "" for an estimate in the paper's direction, without an interval, or of a
    parity (whose sign means nothing)."""
    if (ev.margin is not None or ev.ci_low is None or ev.ci_high is None or paper == 0
            or ev.estimate * paper >= 0):
        return ""
    excludes = ev.ci_low > 0 or ev.ci_high < 0
    return (f"the estimate is opposite the paper's ({paper:+.3g}): {ev.estimate:+.3g} "
            f"[{ev.ci_low:+.3g}, {ev.ci_high:+.3g}]"
            + (", its interval excludes 0" if excludes else "") + "; ")


def verdict_counts(rows: Sequence[dict]) -> dict[str, int]:
    """How many of ``rows`` (dicts with a ``verdict``) fall under each verdict."""
    return {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
