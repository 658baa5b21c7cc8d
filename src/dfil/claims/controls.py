"""Positive controls: whether an effect can appear on the grid that ran (pure).

A control (the grid's ``controls:``, :class:`dfil.config.gridfile.Control`) trains its family's
cells through the same path and heads, differing only in the input: the item's true
proportion appended to the frozen features (:mod:`dfil.engine.control`). With it, heads,
composing and metrics that work must move the declared metric in the declared direction
by at least the declared threshold, seed by seed, against the family's own cells, and
reach the declared ceiling (the metric's value when the input is read exactly) where
one is declared. A control is cited only for claims whose runs all lie on its reference
cells' task, backbone and method (:func:`covers`). Such a claim whose effect is
reversed on the grid (contradicted; never an inconclusive one) is then attributed to the
grid's model and data (its controls passed) or flags the code (one failed).
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
                   "reference_mean", "difference", "worst", "worst_control", "outcome",
                   "reason", "runs", "cells"]
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


def declared_text(metric: str, direction: str, threshold: float,
                  ceiling: float | None = None) -> str:
    """The effect a control declares, in words."""
    sign = ">=" if direction == "greater" else "<="
    text = f"{metric}: control - reference {sign} {_SIGN[direction] * threshold:+g}"
    if ceiling is not None:
        text += f" and control {sign} {ceiling:g}"
    return f"{text} on every seed"


def control_result(name: str, spec, values: Sequence[tuple[float | None, float | None]],
                   runs: str = "", cells: Iterable[str] = ()) -> dict:
    """Control ``name``'s result row (:data:`CONTROL_COLUMNS`): ``spec`` has ``family``,
    ``metric``, ``direction`` ("greater"/"less"), ``threshold`` and ``ceiling`` (None:
    none declared); ``values``: per seed, (control's value, reference's value), None where
    that run has none. Passed when every seed with both values moves the metric the
    declared way by at least the threshold, ``sign * (control - reference) >= threshold``,
    and reaches the ceiling where one is declared, ``sign * control >= sign * ceiling``;
    failed otherwise; not run without a seed that has both. ``runs``: the run keys
    compared, in words; ``cells``: the coordinates (:func:`cell_coordinates`) of the
    reference cells, the only cells whose claims the control is cited for."""
    sign = _SIGN[spec.direction]
    ceiling = getattr(spec, "ceiling", None)
    both = [(c, r) for c, r in values if c is not None and r is not None]
    row = {"control": name, "family": spec.family, "metric": spec.metric,
           "declared": declared_text(spec.metric, spec.direction, spec.threshold, ceiling),
           "n": len(both), "control_mean": None, "reference_mean": None,
           "difference": None, "worst": None, "worst_control": None, "runs": runs,
           "cells": tuple(sorted(set(cells)))}
    if not both:
        return {**row, "outcome": "not run",
                "reason": f"no seed with both a control and a reference run ({len(values)} "
                          "declared)"}
    diffs = [c - r for c, r in both]
    worst = min(diffs, key=lambda d: sign * d)
    worst_control = min((c for c, _ in both), key=lambda c: sign * c)
    row.update(control_mean=sum(c for c, _ in both) / len(both),
               reference_mean=sum(r for _, r in both) / len(both),
               difference=sum(diffs) / len(diffs), worst=worst, worst_control=worst_control)
    moved = sign * worst >= spec.threshold
    reached = ceiling is None or sign * worst_control >= sign * ceiling
    passed = moved and reached
    held = "holds" if passed else "does not hold"
    reason = f"worst seed {worst:+.3g} of {len(both)}"
    if ceiling is not None:
        reason += f", worst control value {worst_control:.3g} (ceiling {ceiling:g})"
    return {**row, "outcome": "passed" if passed else "failed",
            "reason": f"{reason}: the declared effect {held}"}


def cell_coordinates(key: str) -> str:
    """The coordinates a control's citation is decided on, from a run key:
    ``task/backbone/method`` without the variant (a control and its reference cells may
    be frozen-feature variants of the cells a claim reads)."""
    task, backbone, method = key.split("/")[:3]
    return f"{task}/{backbone}/{method.split('+', 1)[0]}"


def covers(result: dict, run_keys: Iterable[str]) -> bool:
    """Whether control ``result`` is cited for a claim whose sides read ``run_keys``:
    each key's coordinates (:func:`cell_coordinates`) are among the control's reference
    cells', so a control on one task, backbone or method is never cited for a claim
    over another (nor for a claim that reads no run)."""
    keys = list(run_keys)
    return bool(keys) and {cell_coordinates(k) for k in keys} <= set(result.get("cells", ()))


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
    """``rows`` (:func:`dfil.claims.judge`'s, each with its ``claim_family`` and the
    ``run_keys`` its sides read) with the ``control`` column: each control result of the
    claim's family that covers the claim's cells (:func:`covers`) in words; a claim
    contradicted (its effect reversed) says in its reason what those controls attribute
    it to. An inconclusive claim is attributed nothing: an effect a grid could not
    detect is no effect that went missing."""
    by_family: Mapping[str, list[dict]] = {}
    for r in results:
        by_family.setdefault(r["family"], []).append(r)
    out = []
    for row in rows:
        found = [r for r in by_family.get(row["claim_family"], [])
                 if covers(r, row.get("run_keys", ()))]
        row = {**row, "control": "; ".join(map(control_words, found))}
        if found and row["verdict"] == "contradicted":
            row["reason"] = f"{row['reason']}; {attribution(found, standin)}"
        out.append(row)
    return out
