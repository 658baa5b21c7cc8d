"""Every distinct claim of the tables judged once: the rows of ``claims.csv`` (columns
:data:`COLUMNS`), from which the index, the diff and numbers.csv's claim ids are made
(pure).

``p`` is the claim's one p (:mod:`dfil.claims.evidence`), ``p_holm`` it adjusted in one
Holm pass over the rows of its ``family`` that are counted (a p and no degenerate run):
``multipletests(p, method="holm")`` over those rows of claims.csv gives ``p_holm``.
``mde`` is the minimum detectable effect of a directional claim's test at the seeds
that ran, at its family's Bonferroni-bounded level alpha / m (m: the family's counted
rows), the level the planner sizes seeds at (:func:`dfil.stats.family_alpha`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from dfil.claims.construction import construction_verdict
from dfil.claims.controls import claim_family
from dfil.claims.declare import Claim, Declared, declare, merge
from dfil.claims.evidence import Evidence, evaluate
from dfil.claims.verdict import ALPHA, NOT_PLANNED, STANDIN_REASON, decide, detectable, mde
from dfil.render.entries import Table
from dfil.stats import family_alpha, holm_by_family

COLUMNS = ["claim", "label", "paper", "places", "sides", "test", "n_a", "n_b", "estimate",
           "ci_low", "ci_high", "p", "p_holm", "mde", "power_at_n", "power_why", "planned",
           "verdict", "reason", "family", "claim_family", "control"]


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:+.3g}"


def places_text(claim: Claim) -> str:
    """Every place the claim is printed, with the paper's value there."""
    return "; ".join(f"{p.id} {p.label} (paper {_num(p.paper) or 'no value'})"
                     for p in claim.places)


def _side_cells(entry) -> str:
    if entry is None or not entry.reads:
        return "(no run)"
    cells = sorted({k.rsplit("/seed", 1)[0] for k, _ in entry.reads})
    metrics = sorted({m for _, m in entry.reads})
    return f"{' '.join(cells)} [{' '.join(metrics)}]"


def sides_text(d: Declared) -> str:
    """The cells (and metrics) each side reads."""
    if len(d.sides) == 1:
        return f"per-seed differences: {_side_cells(d.sides[0])}"
    return f"a: {_side_cells(d.sides[0])} | b: {_side_cells(d.sides[1])}"


def declared_claims(tables: Sequence[Table],
                    names: dict[str, Callable] | None = None) -> list[Declared]:
    """Every claim of ``tables`` at every place, in paper order; ``names``: per table
    name, how it names a signed entry (``name_of(row, col)``)."""
    names = names or {}
    return [d for t in tables for d in declare(t, names.get(t.name))]


def _not_run_reason(d: Declared, reason: str) -> str:
    """Why a claim has no run: the words of a side's failed cell where one failed
    (:func:`dfil.contracts.failure.failure_words`, as the tables print them)."""
    why = next((s.reason for s in d.sides if s is not None and s.reason.startswith(
        "not run")), "")
    return f"{reason}: {why}" if why else reason


def judge(tables: Sequence[Table], standin: bool = False,
          names: dict[str, Callable] | None = None) -> list[dict]:
    """One row per distinct claim of ``tables`` (keys :data:`COLUMNS`, in paper order, and
    ``run_keys``: the runs its sides read, which decide the positive controls cited for
    it and which claims.csv does not carry).
    On a stand-in grid (``standin``) each reason says the verdict is about the
    direction only."""
    claims = merge(declared_claims(tables, names))
    found: list[Evidence | None] = [evaluate(c.declared) for c in claims]
    families = [c.family for c in claims]
    counted = [None if e is None or e.degenerate or c.declared.paper is None
               or c.declared.construction else e.p
               for c, e in zip(claims, found, strict=True)]
    p_holm = holm_by_family(counted, families)
    size = {f: sum(p is not None for p, g in zip(counted, families, strict=True) if g == f)
            for f in set(families)}
    rows = []
    for c, ev, ph in zip(claims, found, p_holm, strict=True):
        d = c.declared
        alpha = family_alpha(ALPHA, size[c.family])
        could = ("" if ev is None or d.paper is None or ev.degenerate or d.construction
                 else detectable(ev, d.paper, alpha))
        verdict, reason = (construction_verdict(d, ev) if d.construction
                           else decide(d.paper, ev, ph, could))
        if verdict == "not run":
            reason = _not_run_reason(d, reason)
        if standin and verdict in ("reproduced", "contradicted"):
            reason += f" ({STANDIN_REASON})"
        rows.append({
            "claim": c.id, "label": d.label, "paper": d.paper, "places": places_text(c),
            "sides": sides_text(d), "test": "" if ev is None or d.construction else ev.test,
            "n_a": None if ev is None else ev.n_a, "n_b": None if ev is None else ev.n_b,
            "estimate": None if ev is None else ev.estimate,
            "ci_low": None if ev is None else ev.ci_low,
            "ci_high": None if ev is None else ev.ci_high,
            "p": None if ev is None or d.construction else ev.p, "p_holm": ph,
            "mde": None if ev is None or ev.degenerate or d.construction else mde(ev, alpha),
            "power_at_n": None, "power_why": "",
            "planned": "", "verdict": verdict, "reason": reason, "family": c.family,
            "claim_family": claim_family(m for side in d.reads for _, m in sorted(side)),
            "control": "", "run_keys": tuple(sorted({k for side in d.reads for k, _ in side}))})
    return rows


def with_power(rows: Sequence[dict], power: Mapping | None = None,
               planned_grid: bool = False) -> list[dict]:
    """``rows`` (:func:`judge`'s) with each claim's power at the seeds that ran
    (``power``: by claim id, what :func:`dfil.plan.achieved.standings` found: ``power``,
    ``why`` and ``planned`` of each) and, on a grid a budget plan wrote (``planned_grid``),
    ``planned`` or :data:`NOT_PLANNED`: a claim the plan did not take that has no run is
    *not run* for that reason, never a failure."""
    out = []
    for r in rows:
        found = (power or {}).get(r["claim"])
        r = {**r, "power_at_n": None if found is None else found.power,
             "power_why": "" if found is None else found.why}
        if planned_grid:
            took = found is not None and bool(found.planned)
            r["planned"] = "planned" if took else NOT_PLANNED
            if r["verdict"] == "not run" and not took:
                r["reason"] = NOT_PLANNED
        out.append(r)
    return out


def numbers_claims(tables: Sequence[Table], rows: Sequence[dict]) -> dict:
    """Per (table number, row, column): the ids of the claims a printed number belongs
    to, as the claim's own value (a signed entry) or as one of its sides, and the
    verdict of the claim it is the value of (None for a side or a level)."""
    verdict = {r["claim"]: r["verdict"] for r in rows}
    claims = merge(declared_claims(tables))
    of_place = {p.id: c.id for c in claims for p in c.places}
    out: dict[tuple, tuple[list[str], str | None]] = {}
    for t in tables:
        reads: dict[frozenset, list[str]] = {}
        for d in declare(t):
            for s in d.sides:
                if s is not None and s.reads:
                    reads.setdefault(s.reads, []).append(of_place[d.id])
        signed = {(row, col): of_place[d.id] for d in declare(t) for row, col in d.entries
                  if (row, col) in t.signed}
        for row in t.rows:
            for col, e in row.entries.items():
                ids = list(dict.fromkeys(
                    ([signed[(row.id, col)]] if (row.id, col) in signed else [])
                    + reads.get(e.reads, [])))
                if ids:
                    own = signed.get((row.id, col))
                    out[(t.number, row.id, col)] = (ids, verdict.get(own) if own else None)
    return out
