"""The paper's claims as a power analysis needs them (pure: no runs are read).

The claims are the report's and ``claims.csv``'s, read from :mod:`dfil.claims` only: each
distinct claim once (:func:`dfil.claims.merge` of :func:`dfil.claims.declare`'s places:
every published signed entry of a table and every ``effects:`` contrast of
``config/tables.yaml``), with the same ids, labels and tests; ``places`` lists the id of
every place it is printed at.
Each side is what the paper printed for it (mean, the sample std where printed, and its
n: the seeds of the entry's seed set in the source grid) and the grid cells that compute
it. The tables are resolved against :class:`_Shapes`, a
source that answers every selection with placeholder values, so that each entry's sides
and the run keys they read are known before any run exists.

:func:`paper_claims` is the planner's one reader of claims; :func:`ran_claims` reads the
same claims from tables resolved on the runs that exist, each side's n the seeds that ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from dfil.claims import Declared, merge
from dfil.claims.judge import declared_claims
from dfil.render import table_names
from dfil.render.entries import Entry, Table
from dfil.render.fmt import parse_published
from dfil.render.resolve import Resolver
from dfil.render.source import Sample, Source
from dfil.util.errors import ConfigError

#: Seeds of a run that has none (zero-shot scoring): one deterministic run.
UNSEEDED = "na"
#: The placeholder value of a run named by one fixed ``seed:`` (others count 0, 1, ...).
FIXED = -1.0


@dataclass(frozen=True)
class Side:
    """One side of a claim: the paper's printed mean and std (``None``: not printed), its
    n, and the grid coordinates it reads (run keys without their ``/seed<s>`` part)."""

    mean: float | None
    std: float | None
    n: int
    cells: tuple[str, ...]
    seeded: bool = True
    fixed: bool = False
    """Every run it reads is named by one fixed ``seed:`` (more seeds are never read)."""


@dataclass(frozen=True)
class PaperClaim:
    """A claim with its declared test: how its seeds are compared (``paired``: two sides on common
    seeds, judged on their differences; ``welch``: two sides otherwise; ``one-sample``:
    one side's per-seed differences against 0) and, for a parity, the TOST ``margin``
    (None: a difference in the paper's direction). ``dz``: the Cohen's d_z the paper
    prints for it (None: not printed). ``why_not``: why no seed count can settle it (""
    when one can)."""

    id: str
    table: int
    label: str
    effect: float | None
    design: str
    margin: float | None
    sides: tuple[Side, ...]
    headline: bool
    why_not: str = ""
    #: The id of every place the paper prints it (the first is ``id``).
    places: tuple[str, ...] = ()
    dz: float | None = None

    @property
    def spread_known(self) -> bool:
        return self.dz is not None or all(s.std is not None for s in self.sides)

    @property
    def family(self) -> str:
        """The Holm family its verdict is adjusted in (``primary``: Tables 1-7)."""
        return "primary" if self.headline else "exploratory"

    @property
    def test(self) -> str:
        """The declared test in a word or two: ``paired``, ``welch``, ``one-sample``,
        with ``TOST`` before it for a parity."""
        return self.design if self.margin is None else f"TOST {self.design}"


class _Shapes(Source):
    """A source with a placeholder value for every run a selection names (0, 1, 2, ... in
    seed order; :data:`FIXED` for a selection of one fixed ``seed:``): tables resolve to
    their full shape, with each entry's reads and sides."""

    def sample(self, where: Mapping) -> Sample:
        metric = where.get("metric")
        if metric is None:
            raise ConfigError("a table entry needs a metric")
        selection = self.select(where)
        values = {key.rsplit("/seed", 1)[1]: FIXED if "seed" in where else float(i)
                  for i, key in enumerate(selection.keys)}
        return Sample(pd.Series(values, dtype=float),
                      frozenset((key, metric) for key in selection.keys),
                      selection.substituted)


def _side(entry: Entry | None) -> Side:
    mean, std = parse_published(None if entry is None else entry.published)
    reads = entry.reads if entry is not None else frozenset()
    keys = sorted({key for key, _ in reads})
    cells = tuple(dict.fromkeys(k.rsplit("/seed", 1)[0] for k in keys))
    seeded = all(not k.endswith("/seed" + UNSEEDED) for k in keys)
    fixed = entry is not None and entry.kind == "stat" and entry.values == (FIXED,)
    return Side(mean, std, entry.n if entry is not None else 0, cells, seeded, fixed)


def _printed_side(entry: Entry | None, printed: Entry | None) -> Side:
    """The side ``entry`` measures, with the mean and std the paper prints at
    ``printed`` (the entry it stands for where the paper measured it elsewhere)."""
    side = _side(entry)
    mean, std = parse_published(None if printed is None else printed.published)
    return Side(mean, std, side.n, side.cells, side.seeded, side.fixed)


def _why_not(effect: float | None, sides: tuple[Side, ...], entry: Entry | None) -> str:
    if effect is None:
        return "the paper prints no value for one side"
    if not sides and (entry is None or not entry.reads):
        return "the grid has no cell for it"
    if not sides:
        return "a derived number with no seeds to test"
    if any(not s.cells for s in sides):
        return "the grid has no cell for one side"
    if any(not s.seeded for s in sides):
        return "one side is a single deterministic run: no test on seeds"
    if any(s.fixed for s in sides):
        return "one side reads one fixed seed: no test on seeds"
    return ""


def _dz(spec: Mapping, d: Declared) -> float | None:
    """The d_z the paper prints for the signed entry ``d`` (its row's ``dz:``), else None;
    a claim takes the first of its places' (the paper may print it at any of them)."""
    if len(d.entries) != 1:
        return None
    row, col = d.entries[0]
    rspec = next((r for r in spec.get("rows", []) if str(r.get("id")) == row), {})
    value = (rspec.get("dz") or {}).get(col)
    return None if value is None else float(value)


def _design(d: Declared, sides: tuple[Side, ...]) -> str:
    """How the declaration compares seeds, as the planner's sides show it: a signed entry of its
    own per-seed differences is one-sample."""
    if len(sides) == 1:
        return "one-sample"
    return "paired" if d.design == "paired" else "welch"


def _sides(table: Table, spec: Mapping, d: Declared) -> tuple[tuple[Side, ...], Entry | None]:
    """The sides of the place ``d`` of ``table`` as the paper printed them, and the
    signed entry it is (None for a declared effect)."""
    if len(d.entries) != 1:  # a declared effect: each side as printed where the paper
        # prints it (its ``paper_a``/``paper_b``, else the entry measured)
        printed = d.printed or d.entries
        return tuple(_printed_side(table.entry(*rc), table.entry(*at))
                     for rc, at in zip(d.entries, printed, strict=True)), None
    row, col = d.entries[0]  # a published signed entry
    entry = table.entry(row, col)
    if entry is not None and entry.sides:
        return tuple(_side(e) for e in entry.sides), entry
    if entry is not None and entry.kind == "stat":
        one = _side(entry)
        # a per-seed difference: its printed spread is the differences' own
        return (Side(d.paper, one.std, one.n, one.cells, one.seeded, one.fixed),), entry
    return (), entry


def _claims_of(tables: Sequence[Table], specs: Mapping) -> list[PaperClaim]:
    """One :class:`PaperClaim` per distinct claim of ``tables``
    (:func:`dfil.claims.merge`), by the id ``claims.csv`` gives it, in paper order."""
    by_number = {t.number: t for t in tables}
    out = []
    for c in merge(declared_claims(tables)):
        d = c.declared
        table = by_number[d.table]
        sides, entry = _sides(table, specs[table.name], d)
        out.append(PaperClaim(c.id, d.table, d.label, d.paper, _design(d, sides),
                              d.margin if d.test == "parity" else None, sides,
                              c.family == "primary",
                              (f"holds by construction: no test ({d.construction})"
                               if d.construction else _why_not(d.paper, sides, entry)),
                              tuple(p.id for p in c.places),
                              next((z for p in c.places if (z := _dz(
                                  specs[by_number[p.table].name], p)) is not None), None)))
    return out


def ran_claims(tables: Sequence[Table], specs: Mapping) -> list[PaperClaim]:
    """Every claim of ``tables`` as resolved on the runs that exist
    (:func:`dfil.render.build.resolve_tables`): each side's n is the seeds that ran; the
    same claims, ids and merges as ``claims.csv``."""
    return _claims_of(tables, specs)


def paper_claims(grid, specs: Mapping) -> list[PaperClaim]:
    """Every claim of the tables ``specs`` (``config/tables.yaml``) on ``grid`` (a
    :class:`dfil.config.grid.Grid`): sides, printed numbers and cells, in table order."""
    resolver = Resolver(specs, _Shapes(grid))
    return _claims_of([resolver.table(name) for name in table_names(specs)], specs)
