"""The table ``dfil grid plan`` prints: one line per claim, then the plan's coverage."""

from __future__ import annotations

from dfil.plan.budget import Plan, Row


def _num(x: float) -> str:
    return f"{x:+.1f}" if abs(x) >= 0.05 else "0.0"


def _test(c) -> str:
    """The claim's test, with the d_z the paper prints where it plans by it."""
    return c.test + (f" dz={c.dz:g}" if c.dz is not None and c.design == "paired" else "")


def spread(row: Row) -> str:
    """The paper's numbers behind a claim: each side's mean±std (n), or 'spread unknown'."""
    c = row.claim
    if c.effect is None:
        return "-"
    if not c.spread_known:
        return "spread unknown"
    return " vs ".join(f"{'' if s.mean is None else f'{s.mean:g}'}"
                       f"{'' if s.std is None else f'±{s.std:g}'} (n={s.n})" for s in c.sides)


def _seeds(row: Row) -> str:
    if row.need is None:
        return "-"
    if row.need.seeds is None:
        return "-"
    return f"{row.need.seeds}" + ("*" if row.need.method == "spread unknown" else "")


def _planned(row: Row) -> str:
    if row.planned:
        return "yes"
    return f"no: {row.why_not}" if row.why_not else "no"


def coverage_line(planned: int, considered: int, power: float, budget: float,
                  projected: float) -> str:
    """The one-line summary: K of M claims planned, for N GPU-h (projected X)."""
    return (f"{planned} of {considered} claims planned at power {power:g} for "
            f"{budget:g} GPU-h (projected {projected:.1f} GPU-h)")


def coverage(plan: Plan) -> str:
    """:func:`coverage_line` of ``plan``."""
    return coverage_line(plan.planned, len(plan.rows), plan.power, plan.budget,
                         plan.projected)


def recorded_coverage(record) -> str:
    """:func:`coverage_line` of a grid file's ``plan:`` block
    (:class:`dfil.config.gridfile.PlanRecord`)."""
    return coverage_line(len(record.claims), record.considered, record.power,
                         record.budget, record.projected)


def format_plan(plan: Plan) -> str:
    """Every claim: its id, the paper's effect and spread, its test, the seeds a side it
    needs, the runs and GPU-hours they cost, and whether the plan takes it; then
    :func:`coverage`."""
    head = (f"{'claim':<46} {'paper Δ':>7}  {'paper spread':<34} {'test':<15} "
            f"{'seeds/side':>10} {'runs':>4} {'GPU-h':>7}  planned")
    lines = [head, "-" * len(head)]
    for r in plan.rows:
        c = r.claim
        cid = c.id if len(c.id) <= 46 else c.id[:45] + "…"
        effect = "-" if c.effect is None else _num(c.effect)
        cost = f"{r.hours:.1f}" if r.runs else "-"
        runs = str(len(r.runs)) if r.runs else "-"
        lines.append(f"{cid:<46} {effect:>7}  {spread(r):<34} {_test(c):<15} {_seeds(r):>10} "
                     f"{runs:>4} {cost:>7}  {_planned(r)}")
    levels = ", ".join(f"{f} {plan.alpha:g}/{m} = {plan.alpha / max(m, 1):.3g}"
                       for f, m in plan.sizes)
    lines += ["-" * len(head),
              f"seeds/side: for power {plan.power:g} with the claim's test (two-sided, "
              "counted in the paper's direction; TOST with its margin for a parity) at its "
              f"family's Bonferroni level alpha/m, a bound on Holm's ({levels}; * spread "
              "unknown: planned at 3); runs and GPU-h: what the claim needs alone (runs "
              "shared between claims are paid once)",
              coverage(plan)]
    return "\n".join(lines)
