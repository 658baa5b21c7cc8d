"""Evaluators for claims that are not statistical tests: arithmetic, ranges, counts,
argmax claims, integer-count (GRIM-style) checks and nearest-center labels (pure).

Like :mod:`dfil.audit.kinds`, each takes the printed inputs and the printed text and
returns a :class:`~dfil.audit.kinds.Finding`.
"""

from __future__ import annotations

import math

import numpy as np

from dfil.audit.kinds import Finding, claimed_target, edge_note, span
from dfil.audit.printed import (
    Interval,
    Printed,
    evaluate,
    fmt,
    mean_sd,
    point_value,
    printed,
    printed_range,
)
from dfil.core.inference import nearest_center


def arithmetic(inputs: dict, text: str) -> Finding:
    """An arithmetic expression over named printed values (``relation``: eq, gt, ge, lt,
    le against the claimed value)."""
    vals = {k: printed(v) for k, v in inputs.get("values", {}).items()}
    iv = evaluate(inputs["expr"], {k: v.interval for k, v in vals.items()})
    at = point_value(inputs["expr"], {k: v.value for k, v in vals.items()})
    target = claimed_target(inputs, text)
    rel = inputs.get("relation", "eq")
    b = target.value
    if rel == "eq":
        ok = iv.overlaps(target.interval)
        note = edge_note(ok, at, target)
    else:
        op = {"gt": lambda x: x > b, "ge": lambda x: x >= b, "lt": lambda x: x < b,
              "le": lambda x: x <= b}[rel]
        ok = op(iv.hi) or op(iv.lo)
        note = "" if not ok or (op(iv.hi) and op(iv.lo)) else \
            "; holds only within the inputs' rounding"
    rng = "" if iv.lo == iv.hi else f"; {span(iv)} under rounding"
    return Finding(ok, f"{fmt(at)}{rng}", f"{inputs['expr']}" + note, float(at))


def range_claim(inputs: dict, text: str) -> Finding:
    """A printed range [lo, hi] against the least and greatest of named values."""
    vals = {k: printed(v) for k, v in inputs["values"].items()}
    claim = inputs.get("claimed", text)
    lo_p, hi_p = (printed(claim[0]), printed(claim[1])) if isinstance(claim, list) \
        else printed_range(claim)
    least = Interval(min(v.interval.lo for v in vals.values()),
                     min(v.interval.hi for v in vals.values()))
    most = Interval(max(v.interval.lo for v in vals.values()),
                    max(v.interval.hi for v in vals.values()))
    ok = least.overlaps(lo_p.interval) and most.overlaps(hi_p.interval)
    lo_name = min(vals, key=lambda k: vals[k].value)
    hi_name = max(vals, key=lambda k: vals[k].value)
    return Finding(ok, f"{vals[lo_name].text} to {vals[hi_name].text}",
                   f"least {lo_name}, greatest {hi_name} of {len(vals)} values")


def _compare(pred: str, xs: list[Printed]) -> bool | None:
    """True/False when the rounding settles the predicate, None when it does not."""
    x, rest = xs[0].interval, [v.interval for v in xs[1:]]
    if pred in ("greater", "less"):
        a, b = (x, rest[0]) if pred == "greater" else (rest[0], x)
        return True if a.lo > b.hi else False if a.hi < b.lo else None
    if pred == "abs_le":
        bound = rest[0].lo
        big, small = max(abs(x.lo), abs(x.hi)), _abs_min(x)
        return True if big <= bound else False if small > bound else None
    if pred in ("is_min", "is_max"):
        if pred == "is_max":
            x, rest = -x, [-r for r in rest]
        return True if all(x.hi < r.lo for r in rest) else \
            False if any(r.hi < x.lo for r in rest) else None
    raise ValueError(f"unknown predicate {pred!r}")


def _abs_min(x: Interval) -> float:
    return 0.0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))


def count(inputs: dict, text: str) -> Finding:
    """How many items satisfy ``predicate`` (greater: first > second; less; abs_le:
    |first| <= second; is_min / is_max: first is the least / greatest; identical: all
    printed alike), against a claimed count. Rounding can leave an item undecided, so
    the count is a range."""
    pred = inputs["predicate"]
    items = inputs["items"]
    if pred == "identical":  # printed texts, e.g. "48.0 ± 0.1", compared as printed
        res = {k: len({" ".join(str(v).split()) for v in vs}) == 1 for k, vs in items.items()}
    else:
        res = {k: _compare(pred, [printed(v) for v in vs]) for k, vs in items.items()}
    yes = [k for k, r in res.items() if r]
    maybe = [k for k, r in res.items() if r is None]
    target = claimed_target(inputs, text)
    ok = len(yes) <= target.value <= len(yes) + len(maybe)
    rec = f"{len(yes)}" if not maybe else f"{len(yes)} to {len(yes) + len(maybe)}"
    detail = f"{pred} holds for: {', '.join(yes) or 'none'}"
    if maybe:
        detail += f"; undecided within rounding: {', '.join(maybe)}"
    return Finding(ok, f"{rec} of {len(items)}", detail)


def argmax(inputs: dict, text: str) -> Finding:
    """Whether the claimed entry can be the greatest (``sense: min``: least) of the
    named values, given their rounding."""
    vals = {k: printed(v) for k, v in inputs["values"].items()}
    sense = inputs.get("sense", "max")
    sign = 1.0 if sense == "max" else -1.0
    ivs = {k: v.interval if sign > 0 else -v.interval for k, v in vals.items()}
    can = [k for k, iv in ivs.items()
           if all(iv.hi >= o.lo for j, o in ivs.items() if j != k)]
    claimed = str(inputs.get("claimed", text))
    if claimed not in vals:
        raise ValueError(f"claimed entry {claimed!r} is not among the values {sorted(vals)}")
    best = max(vals, key=lambda k: sign * vals[k].value)
    return Finding(claimed in can, f"{best} ({vals[best].text})",
                   f"{sense} within rounding: {', '.join(can)}")


def integer_counts(inputs: dict, text: str) -> Finding:
    """Means (± sd) of per-seed percentages of ``items`` integer counts over ``units``
    seeds: reachable when some integer total (and, with an sd, some per-seed counts)
    prints as the claim. The mean alone is the GRIM test."""
    n_items, units = int(inputs["items"]), int(inputs["units"])
    ddof, scale = int(inputs.get("ddof", 1)), float(inputs.get("scale", 100))
    claim = str(inputs.get("claimed", text))
    m, s = mean_sd(claim) if "±" in claim else (printed(claim), None)
    denom = n_items * units
    totals = [k for k in range(math.ceil(m.interval.lo * denom / scale - 1e-9),
                               math.floor(m.interval.hi * denom / scale + 1e-9) + 1)
              if 0 <= k <= denom]
    if not totals:
        return Finding(False, "no integer total",
                       f"mean of {units} seeds x {n_items} items: no total K with "
                       f"{scale:g}K/{denom} in {span(m.interval)}")
    if s is None:
        k = totals[0]
        return Finding(True, f"{k}/{denom} = {fmt(scale * k / denom)}",
                       f"{units} seeds x {n_items} items; totals {totals}")
    for k in totals:
        for combo in _compositions(k, units, n_items):
            sd = float(np.std(np.array(combo) * scale / n_items, ddof=ddof))
            if s.interval.lo - 1e-9 <= sd <= s.interval.hi + 1e-9:
                return Finding(True, f"counts {combo}/{n_items}: "
                                     f"{fmt(scale * k / denom)} ± {fmt(sd, 3)}",
                               f"{units} seeds x {n_items} items, ddof = {ddof}")
    return Finding(False, "no integer per-seed counts",
                   f"no {units} counts of {n_items} give {claim} (ddof = {ddof})")


def _compositions(total: int, parts: int, cap: int):
    """Non-decreasing tuples of ``parts`` integers in [0, cap] summing to ``total``."""
    if parts > 4:
        raise ValueError(f"per-seed count search is limited to 4 seeds, got {parts}")

    def rec(left, k, least):
        if k == 1:
            if least <= left <= cap:
                yield (left,)
            return
        for x in range(least, min(cap, left // k) + 1):
            for rest in rec(left - x, k - 1, x):
                yield (x, *rest)

    yield from rec(total, parts, 0)


def nearest(inputs: dict, text: str) -> Finding:
    """The nearest-center label (Thm 1) of a printed proportion; the rule is monotone, so
    the labels a rounded p can get are those between its ends'."""
    p = printed(inputs["p"])
    centers = {k: printed(v).value for k, v in inputs["centers"].items()}
    names, c = list(centers), np.array(list(centers.values()))
    if np.any(np.diff(c) <= 0):
        raise ValueError(f"centers must be listed in increasing order, got {centers}")
    lo, hi = (int(x) for x in nearest_center(np.array([p.interval.lo, p.interval.hi]), c))
    labels = names[lo:hi + 1]
    claimed = str(inputs.get("claimed", text))
    return Finding(claimed in labels, " or ".join(labels),
                   f"p = {p.text}; nearest of " + ", ".join(f"{k} {v:g}"
                                                            for k, v in centers.items()))
