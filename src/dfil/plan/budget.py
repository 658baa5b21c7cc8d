"""A plan for a budget of GPU-hours: each claim's seeds a side, the runs and GPU-hours
that costs, and which claims the budget settles (pure).

The pieces: the claims (:mod:`dfil.plan.claims`), the seeds each needs
(:mod:`dfil.plan.power`), what a run costs (:mod:`dfil.plan.price`) and the exact choice
(:mod:`dfil.plan.choose`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dfil.plan.choose import Option, choose
from dfil.plan.claims import PaperClaim
from dfil.plan.power import MAX_SEEDS, Need, family_sizes, seeds_needed
from dfil.stats import family_alpha


@dataclass(frozen=True)
class Row:
    """One claim in a plan: the seeds it needs (``need``; why not, where it cannot be
    planned), the runs and GPU-hours it needs alone, and whether the plan takes it."""

    claim: PaperClaim
    need: Need | None
    runs: frozenset[str]
    hours: float
    planned: bool

    @property
    def plannable(self) -> bool:
        return not self.claim.why_not and self.need is not None and self.need.seeds is not None

    @property
    def why_not(self) -> str:
        if self.claim.why_not:
            return self.claim.why_not
        return self.need.message if self.need is not None and self.need.seeds is None else ""


@dataclass(frozen=True)
class Plan:
    """The rows of every claim, the budget, the power and alpha asked for, the runs of
    the planned claims with their projected GPU-hours (shared runs counted once), and
    each family's size (``sizes``: the m of its Bonferroni level alpha / m)."""

    rows: tuple[Row, ...]
    budget: float
    power: float
    alpha: float
    runs: frozenset[str]
    projected: float
    sizes: tuple[tuple[str, int], ...] = ()

    @property
    def planned(self) -> int:
        return sum(r.planned for r in self.rows)


def need_of(claim: PaperClaim, alpha: float, power: float) -> Need | None:
    """The seeds a side ``claim`` needs at level ``alpha`` (its family's Bonferroni
    level; None: it cannot be planned at all)."""
    if claim.why_not:
        return None
    return seeds_needed(claim, alpha, power)


def runs_of(claim: PaperClaim, seeds: int, order: Sequence[int]) -> frozenset[str]:
    """The run keys of ``claim`` at ``seeds`` seeds a side (the first of ``order``)."""
    return frozenset(f"{cell}/seed{s}" for side in claim.sides for cell in side.cells
                     for s in order[:seeds])


def make_plan(claims: Sequence[PaperClaim], hours: Mapping[str, float], order: Sequence[int],
              budget: float, alpha: float = 0.05, power: float = 0.8) -> Plan:
    """The plan for ``budget`` GPU-hours at power ``power``, each claim at its family's
    Bonferroni level alpha / m (m: the claims of its family in ``claims`` that can carry
    a p, :func:`dfil.plan.power.family_sizes`): ``hours`` gives one run's GPU-hours by
    coordinate (:func:`dfil.plan.price.coordinate_hours`), ``order`` the seeds to draw
    (at least :data:`dfil.plan.power.MAX_SEEDS`). A run whose coordinate ``hours`` lacks
    (its backbone has no architecture) is a ``ValueError`` naming it: never priced at 0."""
    if len(order) < MAX_SEEDS:
        raise ValueError(f"a plan draws up to {MAX_SEEDS} seeds; got {len(order)}")
    sizes = family_sizes(claims)
    rows = []
    for c in claims:
        need = need_of(c, family_alpha(alpha, sizes[c.family]), power)
        ok = need is not None and need.seeds is not None
        runs = runs_of(c, need.seeds, order) if ok else frozenset()
        unpriced = sorted({k.rsplit("/seed", 1)[0] for k in runs} - hours.keys())
        if unpriced:
            raise ValueError(f"claim {c.id}: no GPU-hours for {unpriced[0]}"
                             f"{f' and {len(unpriced) - 1} more' if len(unpriced) > 1 else ''}"
                             " (its backbone has no architecture: fetch its config.json or "
                             "give the grid's backbones.<name>.arch)")
        rows.append(Row(c, need, runs, sum(hours[k.rsplit("/seed", 1)[0]] for k in runs),
                        False))
    run_hours = {k: hours[k.rsplit("/seed", 1)[0]] for r in rows for k in r.runs}
    chosen = choose([Option(r.claim.id, r.runs, r.claim.headline) for r in rows
                     if r.plannable], run_hours, budget)
    rows = [Row(r.claim, r.need, r.runs, r.hours, r.claim.id in chosen) for r in rows]
    runs = frozenset().union(*(r.runs for r in rows if r.planned))
    return Plan(tuple(rows), budget, power, alpha, runs, sum(run_hours[k] for k in runs),
                tuple(sorted(sizes.items())))


def select(claims: Sequence[PaperClaim], wanted: Sequence[str]) -> list[PaperClaim]:
    """The claims ``wanted`` names (an id, or a table as ``T5``: a claim printed at several
    places is named by any of them); ``ValueError`` naming any that matches none."""
    out, unknown = [], []
    for w in wanted:
        found = [c for c in claims if any(p == w or p.split(":", 1)[0] == w
                                          for p in (c.id, *c.places))]
        if not found:
            unknown.append(w)
        out += [c for c in found if c not in out]
    if unknown:
        raise ValueError(f"no claim {', '.join(map(repr, unknown))}; ids look like "
                         f"{claims[0].id!r} or a table, 'T5' (`dfil grid plan` lists them)")
    return out
