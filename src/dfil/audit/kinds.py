"""One evaluator per kind of check: printed inputs in, a :class:`Finding` out (pure).

Each evaluator recomputes the quantity a check is about from the numbers the paper
prints, over every value those printed numbers could stand for (see
:mod:`dfil.audit.printed`), and says whether the printed result is reachable. The
comparison target is ``inputs["claimed"]`` when a check gives one, else the check's
``printed`` text parsed as a number.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dfil import stats
from dfil.audit.printed import (
    Interval,
    Printed,
    fmt,
    mean_sd,
    printed,
)


@dataclass(frozen=True)
class Finding:
    """``ok``: the printed value is reachable (None: cannot be recomputed from what the
    paper prints); ``recomputed``: what the inputs give; ``detail``: how; ``point``: the
    recomputed number at the printed inputs, where it is one number (for
    :func:`dfil.audit.severity.flips`)."""

    ok: bool | None
    recomputed: str
    detail: str = ""
    point: float | None = None


def claimed_target(inputs: dict, text: str) -> Printed:
    return printed(inputs["claimed"]) if "claimed" in inputs else printed(text)


def span(iv: Interval, digits: int = 4) -> str:
    return fmt(iv.lo, digits) if iv.lo == iv.hi else f"[{fmt(iv.lo, digits)}, {fmt(iv.hi, digits)}]"


def within(value: float, target: Printed) -> bool:
    return target.interval.lo - 1e-9 <= value <= target.interval.hi + 1e-9


def ttest(inputs: dict, text: str) -> Finding:
    """Two-sample t test (``test: welch | student``) from "mean ± sd" and n."""
    (m1, s1), (m2, s2) = mean_sd(inputs["a"]), mean_sd(inputs["b"])
    n1, n2 = inputs["n"]
    welch = inputs.get("test", "welch") == "welch"
    point = (stats.welch_from_stats if welch else stats.student_from_stats)(
        m1.value, s1.value, n1, m2.value, s2.value, n2)
    r = stats.ttest_pvalue_range(
        stats.SummaryBox((m1.interval.lo, m1.interval.hi), (s1.interval.lo, s1.interval.hi), n1),
        stats.SummaryBox((m2.interval.lo, m2.interval.hi), (s2.interval.lo, s2.interval.hi), n2),
        equal_var=not welch)
    target = claimed_target(inputs, text)
    ok = Interval(r.low, r.high).overlaps(target.interval)
    name = "Welch" if welch else "Student"
    return Finding(ok, f"p = {fmt(point.pvalue, 3)}; [{fmt(r.low, 3)}, {fmt(r.high, 3)}] "
                       "under rounding",
                   f"{name} t = {fmt(point.statistic, 3)}, df = {fmt(point.df, 3)}, "
                   f"n = {n1}/{n2}" + edge_note(ok, point.pvalue, target),
                   float(point.pvalue))


def edge_note(ok: bool, value: float, target: Printed) -> str:
    return "; reachable only within the inputs' rounding" if ok and not within(value, target) \
        else ""


def paired_dz(inputs: dict, text: str) -> Finding:
    """Paired t test from Cohen's d_z and n (t = d_z sqrt(n), df = n - 1)."""
    dz, n = printed(inputs["dz"]), int(inputs["n"])
    point = stats.paired_from_dz(dz.value, n)
    ends = [stats.paired_from_dz(x, n).pvalue for x in (dz.interval.lo, dz.interval.hi)]
    iv = Interval(min(ends), max(ends))
    target = claimed_target(inputs, text)
    ok = iv.overlaps(target.interval)
    return Finding(ok, f"p = {fmt(point.pvalue, 3)}; {span(iv, 3)} under rounding",
                   f"t = {fmt(point.statistic, 3)}, df = {n - 1}" +
                   edge_note(ok, point.pvalue, target), float(point.pvalue))


def paired_t(inputs: dict, text: str) -> Finding:
    """A paired t test whose differences' sd is not printed: not recomputable; says
    which sd of the differences the printed p implies."""
    diff, n = printed(inputs["mean_diff"]), int(inputs["n"])
    target = claimed_target(inputs, text)
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
    target = claimed_target(inputs, text)
    hits = [w for w, p in table.items() if within(p, target)]
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
    target = claimed_target(inputs, text)
    return Finding(within(p, target), f"p = {fmt(p, 3)}", f"{k}/{n}, {alt}", float(p))


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
                   f"n = {pts.size}, ddof = {ddof}; under rounding mean {span(mean_iv)}, "
                   f"sd {span(sd_iv, 3)}")


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
