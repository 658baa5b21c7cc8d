"""One evaluator per kind of check: printed inputs in, a :class:`Finding` out (pure).

Each evaluator recomputes the quantity a check is about from the numbers the paper
prints, over every value those printed numbers could stand for (see
:mod:`dfil.audit.printed`), and says whether the printed result is reachable. The
comparison target is ``inputs["claimed"]`` when a check gives one, else the check's
``printed`` text parsed as a number.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dfil import stats
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
from dfil.inference import nearest_center


@dataclass(frozen=True)
class Finding:
    """``ok``: the printed value is reachable (None: cannot be recomputed from what the
    paper prints); ``recomputed``: what the inputs give; ``detail``: how."""

    ok: bool | None
    recomputed: str
    detail: str = ""


def _claimed(inputs: dict, text: str) -> Printed:
    return printed(inputs["claimed"]) if "claimed" in inputs else printed(text)


def _span(iv: Interval, digits: int = 4) -> str:
    return fmt(iv.lo, digits) if iv.lo == iv.hi else f"[{fmt(iv.lo, digits)}, {fmt(iv.hi, digits)}]"


def _within(value: float, target: Printed) -> bool:
    return target.interval.lo - 1e-9 <= value <= target.interval.hi + 1e-9


def ttest(inputs: dict, text: str) -> Finding:
    """Two-sample t test (``test: welch | student``) from "mean ± sd" and n."""
    (m1, s1), (m2, s2) = mean_sd(inputs["a"]), mean_sd(inputs["b"])
    n1, n2 = inputs["n"]
    welch = inputs.get("test", "welch") == "welch"
    point = (stats.welch_from_stats if welch else stats.student_from_stats)(
        m1.value, s1.value, n1, m2.value, s2.value, n2)
    r = stats.ttest_pvalue_range((m1.interval.lo, m1.interval.hi), (s1.interval.lo, s1.interval.hi),
                                 n1, (m2.interval.lo, m2.interval.hi),
                                 (s2.interval.lo, s2.interval.hi), n2, equal_var=not welch)
    target = _claimed(inputs, text)
    ok = Interval(r.low, r.high).overlaps(target.interval)
    name = "Welch" if welch else "Student"
    return Finding(ok, f"p = {fmt(point.pvalue, 3)}; [{fmt(r.low, 3)}, {fmt(r.high, 3)}] "
                       "under rounding",
                   f"{name} t = {fmt(point.statistic, 3)}, df = {fmt(point.df, 3)}, "
                   f"n = {n1}/{n2}" + _edge_note(ok, point.pvalue, target))


def _edge_note(ok: bool, value: float, target: Printed) -> str:
    return "; reachable only within the inputs' rounding" if ok and not _within(value, target) \
        else ""


def paired_dz(inputs: dict, text: str) -> Finding:
    """Paired t test from Cohen's d_z and n (t = d_z sqrt(n), df = n - 1)."""
    dz, n = printed(inputs["dz"]), int(inputs["n"])
    point = stats.paired_from_dz(dz.value, n)
    ends = [stats.paired_from_dz(x, n).pvalue for x in (dz.interval.lo, dz.interval.hi)]
    iv = Interval(min(ends), max(ends))
    target = _claimed(inputs, text)
    ok = iv.overlaps(target.interval)
    return Finding(ok, f"p = {fmt(point.pvalue, 3)}; {_span(iv, 3)} under rounding",
                   f"t = {fmt(point.statistic, 3)}, df = {n - 1}" +
                   _edge_note(ok, point.pvalue, target))


def paired_t(inputs: dict, text: str) -> Finding:
    """A paired t test whose differences' sd is not printed: not recomputable; says
    which sd of the differences the printed p implies."""
    diff, n = printed(inputs["mean_diff"]), int(inputs["n"])
    target = _claimed(inputs, text)
    ps = [max(target.interval.lo, 1e-300), min(target.interval.hi, 1 - 1e-12)]
    sds = sorted(stats.paired_sd_for_p(d, n, p) for d in (diff.interval.lo, diff.interval.hi)
                 for p in ps)
    return Finding(None, "not recomputable",
                   f"only the mean difference ({diff.text}) and n = {n} are printed; "
                   f"p = {target.text} needs sd(differences) in "
                   f"[{fmt(sds[0], 3)}, {fmt(sds[-1], 3)}]")


def wilcoxon_signs(inputs: dict, text: str) -> Finding:
    """Exact Wilcoxon signed-rank p from sign counts (zeros dropped): reachable when some
    rank sum of the negative differences gives the printed p."""
    pos, neg = int(inputs["n_pos"]), int(inputs["n_neg"])
    table = stats.wilcoxon_sign_pvalues(pos, neg)
    target = _claimed(inputs, text)
    hits = [w for w, p in table.items() if _within(p, target)]
    ps = list(table.values())
    detail = (f"n = {pos + neg} non-zero differences ({inputs.get('n_zero', 0)} zero dropped), "
              f"{neg} negative; ")
    detail += (f"p = {target.text} when the negative rank sum W- is "
               + ", ".join(f"{w} (p = {fmt(table[w], 3)})" for w in hits)) if hits else \
        "no rank sum gives the printed p"
    return Finding(bool(hits), f"p in [{fmt(min(ps), 3)}, {fmt(max(ps), 3)}] by the "
                               "negative differences' ranks", detail)


def binomial(inputs: dict, text: str) -> Finding:
    """Exact binomial test of k successes in n (``alternative`` as in scipy)."""
    k, n, alt = int(inputs["k"]), int(inputs["n"]), inputs.get("alternative", "greater")
    p = stats.binomial(k, n, alt).pvalue
    target = _claimed(inputs, text)
    return Finding(_within(p, target), f"p = {fmt(p, 3)}", f"{k}/{n}, {alt}")


def describe(inputs: dict, text: str) -> Finding:
    """Mean and sd (``ddof``) of per-seed printed values against a printed "mean ± sd"
    (``compare: both | mean | sd``; with ``sd`` alone ``printed`` may be the sd)."""
    values = [printed(v) for v in inputs["values"]]
    ddof, compare = int(inputs.get("ddof", 1)), inputs.get("compare", "both")
    lo = np.array([v.interval.lo for v in values])
    hi = np.array([v.interval.hi for v in values])
    pts = np.array([v.value for v in values])
    mean_iv = Interval(float(lo.mean()), float(hi.mean()))
    sd_iv = Interval(*_sd_range(lo, hi, ddof))
    claim = inputs.get("claimed", text)
    if compare == "sd" and "±" not in str(claim):
        mean_p, sd_p = None, printed(claim)
    else:
        mean_p, sd_p = mean_sd(claim)
    ok_mean = mean_p is None or compare == "sd" or mean_iv.overlaps(mean_p.interval)
    ok_sd = compare == "mean" or sd_iv.overlaps(sd_p.interval)
    m, s = float(pts.mean()), float(pts.std(ddof=ddof))
    rec = f"sd {fmt(s, 3)}" if compare == "sd" else f"{fmt(m, 4)} ± {fmt(s, 3)}"
    return Finding(ok_mean and ok_sd, rec,
                   f"n = {pts.size}, ddof = {ddof}; under rounding mean {_span(mean_iv)}, "
                   f"sd {_span(sd_iv, 3)}")


def _sd_range(lo: np.ndarray, hi: np.ndarray, ddof: int) -> tuple[float, float]:
    """Least and greatest sd of values x_i in [lo_i, hi_i].

    The variance is a convex quadratic, so its maximum is at a vertex of the box
    (enumerated: 2^n, n <= 16) and its minimum at x_i = clip(c, lo_i, hi_i) where c is
    the mean of those x (the KKT conditions); c solves c = mean(clip(c)), found by
    bisection since mean(clip(c)) - c falls in c.
    """
    n = lo.size
    if n - ddof < 1:
        raise ValueError(f"sd with ddof={ddof} needs more than {ddof} values, got {n}")
    if n > 16:
        raise ValueError(f"sd range enumerates 2^n vertices; n = {n} is too many")
    a, b = float(lo.min()), float(hi.max())
    for _ in range(200):
        c = (a + b) / 2
        if np.clip(c, lo, hi).mean() > c:
            a = c
        else:
            b = c
    smin = float(np.clip((a + b) / 2, lo, hi).std(ddof=ddof))
    vertices = itertools.product(*zip(lo, hi, strict=True))
    smax = max(float(np.array(v).std(ddof=ddof)) for v in vertices)
    return smin, smax


def arithmetic(inputs: dict, text: str) -> Finding:
    """An arithmetic expression over named printed values (``relation``: eq, gt, ge, lt,
    le against the claimed value)."""
    vals = {k: printed(v) for k, v in inputs.get("values", {}).items()}
    iv = evaluate(inputs["expr"], {k: v.interval for k, v in vals.items()})
    at = point_value(inputs["expr"], {k: v.value for k, v in vals.items()})
    target = _claimed(inputs, text)
    rel = inputs.get("relation", "eq")
    b = target.value
    if rel == "eq":
        ok = iv.overlaps(target.interval)
        note = _edge_note(ok, at, target)
    else:
        op = {"gt": lambda x: x > b, "ge": lambda x: x >= b, "lt": lambda x: x < b,
              "le": lambda x: x <= b}[rel]
        ok = op(iv.hi) or op(iv.lo)
        note = "" if not ok or (op(iv.hi) and op(iv.lo)) else \
            "; holds only within the inputs' rounding"
    rng = "" if iv.lo == iv.hi else f"; {_span(iv)} under rounding"
    return Finding(ok, f"{fmt(at)}{rng}", f"{inputs['expr']}" + note)


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
    target = _claimed(inputs, text)
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
                       f"{scale:g}K/{denom} in {_span(m.interval)}")
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


KINDS: dict[str, Callable[[dict, str], Finding]] = {
    "ttest": ttest, "paired_dz": paired_dz, "paired_t": paired_t,
    "wilcoxon_signs": wilcoxon_signs, "binomial": binomial, "describe": describe,
    "arithmetic": arithmetic, "range": range_claim, "count": count, "argmax": argmax,
    "integer_counts": integer_counts, "nearest_center": nearest,
}
