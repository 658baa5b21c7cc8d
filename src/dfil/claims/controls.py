"""Positive controls: whether an effect can appear on the grid that ran (pure).

A control (the grid's ``controls:``, :class:`dfil.config.gridfile.Control`) trains its family's
cells through the same path and heads, differing only in the input: the item's true
proportion appended to the frozen features (:mod:`dfil.engine.control`). With it, heads,
composing and metrics that work must move the declared metric in the declared direction
by at least the declared threshold, seed by seed, against the family's own cells. A
claim whose effect is reversed on the grid (contradicted; never an inconclusive one) is
then attributed to the grid's model and data (its family's controls passed) or flags the
code (one failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

#: The claim families a control stands for, and which claims belong to each (by the
#: metrics their sides read: :func:`metric_family`).
CONTROL_FAMILIES = {
    "compositional": "composing the extracted proportion with outer quantifiers "
                     "(compositional.*, naturalistic.*)",
    "monotonicity": "labels ordered as the proportions are (csmc.*, entailment.*, "
                    "*.mono_*, grid.*, p_mae)",
    "ordinal": "ordinal and accuracy claims (every other *.acc)",
}
#: The columns of a control's result row (the index's controls section).
CONTROL_COLUMNS = ["control", "family", "metric", "declared", "n", "control_mean",
                   "reference_mean", "difference", "worst", "outcome", "reason", "runs"]
_PREFIXES = (("compositional", ("compositional.", "naturalistic.")),
             ("monotonicity", ("csmc.", "entailment.", "grid.", "p_mae")))
_SIGN = {"greater": 1, "less": -1}


def metric_family(metric: str) -> str:
    """The claim family of a metric's dotted path ("" for none: parameters, centers)."""
    for family, prefixes in _PREFIXES:
        if metric.startswith(prefixes):
            return family
    if ".mono_" in metric:
        return "monotonicity"
    return "ordinal" if metric.endswith(".acc") or ".per_class_acc." in metric else ""


def claim_family(metrics: Iterable[str]) -> str:
    """A claim's family: that of the first of its ``metrics`` that has one."""
    return next((f for f in map(metric_family, metrics) if f), "")


def declared_text(metric: str, direction: str, threshold: float) -> str:
    """The effect a control declares, in words."""
    sign = ">=" if direction == "greater" else "<="
    return f"{metric}: control - reference {sign} {_SIGN[direction] * threshold:+g} on every seed"


def control_result(name: str, spec, values: Sequence[tuple[float | None, float | None]],
                   runs: str = "") -> dict:
    """Control ``name``'s result row (:data:`CONTROL_COLUMNS`): ``spec`` has ``family``,
    ``metric``, ``direction`` ("greater"/"less") and ``threshold``; ``values``: per seed,
    (control's value, reference's value), None where that run has none. Passed when
    every seed with both values moves the metric the declared way by at least the
    threshold: ``sign * (control - reference) >= threshold``; failed otherwise; not run
    without a seed that has both. ``runs``: the run keys compared, in words."""
    sign = _SIGN[spec.direction]
    both = [(c, r) for c, r in values if c is not None and r is not None]
    row = {"control": name, "family": spec.family, "metric": spec.metric,
           "declared": declared_text(spec.metric, spec.direction, spec.threshold),
           "n": len(both), "control_mean": None, "reference_mean": None,
           "difference": None, "worst": None, "runs": runs}
    if not both:
        return {**row, "outcome": "not run",
                "reason": f"no seed with both a control and a reference run ({len(values)} "
                          "declared)"}
    diffs = [c - r for c, r in both]
    worst = min(diffs, key=lambda d: sign * d)
    row.update(control_mean=sum(c for c, _ in both) / len(both),
               reference_mean=sum(r for _, r in both) / len(both),
               difference=sum(diffs) / len(diffs), worst=worst)
    passed = sign * worst >= spec.threshold
    held = "holds" if passed else "does not hold"
    return {**row, "outcome": "passed" if passed else "failed",
            "reason": f"worst seed {worst:+.3g} of {len(both)}: the declared effect {held}"}


def control_words(result: dict) -> str:
    """A control's outcome as claims.csv's ``control`` column says it."""
    if result["outcome"] == "not run":
        return f"not run: {result['control']} ({result['reason']})"
    return (f"{result['outcome']}: {result['control']} {result['metric']} control "
            f"{result['control_mean']:.3g} vs reference {result['reference_mean']:.3g} "
            f"(mean {result['difference']:+.3g}, worst seed {result['worst']:+.3g}, n "
            f"{result['n']}; declared {result['declared'].split(': ', 1)[1]})")


def attribution(results: Sequence[dict], standin: bool) -> str:
    """What a family's controls say about a claim of it that is contradicted."""
    where = "the stand-in" if standin else "this grid's model and data"
    outcomes = {r["outcome"] for r in results}
    if "failed" in outcomes:
        return "its family's positive control failed: this flags the code, not " + where
    if outcomes == {"passed"}:
        return f"its family's positive control passed: attributed to {where}, not the code"
    return "its family's positive control did not run: nothing attributes it"


def with_controls(rows: Sequence[dict], results: Sequence[dict],
                  standin: bool = False) -> list[dict]:
    """``rows`` (:func:`dfil.claims.judge`'s, each with its ``claim_family``) with the
    ``control`` column: each control result of the claim's family in words; a claim
    contradicted (its effect reversed) says in its reason what the controls attribute it
    to. An inconclusive claim is attributed nothing: an effect a grid could not detect is
    no effect that went missing."""
    by_family: Mapping[str, list[dict]] = {}
    for r in results:
        by_family.setdefault(r["family"], []).append(r)
    out = []
    for row in rows:
        found = by_family.get(row["claim_family"], [])
        row = {**row, "control": "; ".join(map(control_words, found))}
        if found and row["verdict"] == "contradicted":
            row["reason"] = f"{row['reason']}; {attribution(found, standin)}"
        out.append(row)
    return out
