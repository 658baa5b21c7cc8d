"""The paper's claims as declared before any run is read (pure).

A claim is every published signed (Δ) entry of a table and every contrast a table
declares under ``effects:`` in ``config/tables.yaml`` (entry a minus entry b). Its test
follows from the paper's value and the grid's seed sets alone, never from a run's
numbers: a parity (the paper's |Δ| below the claim's ``tol``) is tested by TOST with the
margin :attr:`Declared.margin` (one paper seed sd, at least ``tol``); any other
difference by a two-sided t-test whose estimate's sign is read against the paper's,
paired where both sides read one cell each on the same seeds (a per-seed difference),
else Welch's. A signed entry with no sides (a per-seed
difference of its own) is a one-sample t-test of those differences. A place the paper
prints again declares so (``same_as:`` in ``config/tables.yaml``): the places of one
claim are known from the declarations alone, whatever ran (:func:`merge`), and the claim
is judged on its first place's sides.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from dfil.render.entries import Entry, Table
from dfil.render.fmt import parse_published

#: A difference below this (percentage points in most tables) is a parity.
TOL = 0.5
#: A parity's TOST margin in units of the paper's own seed standard deviation: a
#: difference within one seed sd of run-to-run noise is a parity (:attr:`Declared.margin`).
MARGIN_SDS = 1.0
#: The paper's main body: Tables 1-7 (the abstract's findings are Table 2's rows). Their
#: claims are the primary family; the rest are exploratory.
MAIN_TABLES = 7


@dataclass(frozen=True)
class Declared:
    """One claim at one place of the paper. ``sides``: the two entries a difference is
    computed from (a minus b), or the one entry whose per-seed values are the
    difference; ``entries``: their (row, column) in the table, for links."""

    id: str
    table: int
    label: str
    paper: float | None
    tol: float
    sides: tuple[Entry | None, ...]
    entries: tuple[tuple[str, str], ...]
    #: Why the claim holds by construction ("" for an empirical claim;
    #: :mod:`dfil.claims.construction`).
    construction: str = ""
    #: The id of the place whose claim this place prints again ("": its own claim).
    same_as: str = ""
    #: Where the paper prints each side, (row, column), where it prints one at another
    #: entry than the one measured (an effect's ``paper_a``/``paper_b``; () where it
    #: does not), and the std it prints there (None: none).
    printed: tuple[tuple[str, str], ...] = ()
    printed_sds: tuple[float | None, ...] = ()

    @property
    def test(self) -> str:
        """``superiority`` or ``parity`` ("" when the paper prints no value to test)."""
        if self.paper is None:
            return ""
        return "parity" if abs(self.paper) < self.tol else "superiority"

    @property
    def margin(self) -> float:
        """TOST's margin for a parity: :data:`MARGIN_SDS` times the paper's own seed sd
        (the root mean square of the stds it prints for the sides; one side: the std of
        its per-seed differences), never below ``tol``; ``tol`` where a side's std is
        not printed. Tied to the paper's spread, a parity's seeds can be planned."""
        sds = list(self.printed_sds) or [
            None if s is None else parse_published(s.published)[1] for s in self.sides]
        if not sds or any(sd is None for sd in sds):
            return self.tol
        return max(self.tol, MARGIN_SDS * math.sqrt(sum(sd * sd for sd in sds) / len(sds)))

    @property
    def sign(self) -> int:
        """The paper's direction: +1, -1, or 0 for a parity or no value."""
        if self.test != "superiority":
            return 0
        return 1 if self.paper > 0 else -1

    @property
    def design(self) -> str:
        """``one-sample``, ``paired`` or ``welch``, from the runs each side reads."""
        if len(self.sides) == 1:
            return "one-sample"
        seeds = [_seeds(s) for s in self.sides]
        cells = [_cells(s) for s in self.sides]
        single = all(len(c) == 1 for c in cells)
        return "paired" if single and seeds[0] == seeds[1] and len(seeds[0]) >= 2 else "welch"

    @property
    def family(self) -> str:
        return "primary" if self.table <= MAIN_TABLES else "exploratory"

    @property
    def reads(self) -> tuple[frozenset, ...]:
        return tuple(frozenset() if s is None else s.reads for s in self.sides)


def _keys(entry: Entry | None) -> set[str]:
    return set() if entry is None else {key for key, _ in entry.reads}


def _seeds(entry: Entry | None) -> frozenset[str]:
    return frozenset(k.rsplit("/seed", 1)[1] for k in _keys(entry) if "/seed" in k)


def _cells(entry: Entry | None) -> set[str]:
    return {k.rsplit("/seed", 1)[0] for k in _keys(entry)}


@dataclass(frozen=True)
class Claim:
    """One distinct claim: the first place's declaration, and every place it is printed
    (``places``, in paper order; the first is ``declared``)."""

    places: tuple[Declared, ...]

    @property
    def declared(self) -> Declared:
        return self.places[0]

    @property
    def id(self) -> str:
        return self.declared.id

    @property
    def family(self) -> str:
        return "primary" if any(p.family == "primary" for p in self.places) else "exploratory"


def slug(label: str) -> str:
    """A label as an id with no spaces or commas (``--claims`` splits on commas)."""
    return re.sub(r"[^a-z0-9.]+", "-", label.lower()).strip("-")


def _published(table: Table, row: str, col: str) -> float | None:
    value = table.published.get((row, col))
    return None if value is None else parse_published(value)[0]


def _printed_sd(table: Table, at: tuple[str, str]) -> float | None:
    """The std the paper prints at (row, column) ``at`` of ``table`` (None: none)."""
    entry = table.entry(*at)
    return None if entry is None else parse_published(entry.published)[1]


def declare(table: Table, name_of=None) -> list[Declared]:
    """Every claim of one table: its signed entries, then its declared effects.
    ``name_of(row, col)`` names a signed entry (default: its ids)."""
    name_of = name_of or (lambda row, col: f"{row} / {col}")
    out = []
    for row, col in table.signed:
        entry = table.entry(row, col)
        sides = entry.sides if entry is not None and entry.sides else (entry,)
        out.append(Declared(f"T{table.number}:{row}/{col}", table.number, name_of(row, col),
                            _published(table, row, col), TOL, tuple(sides), ((row, col),),
                            same_as=str(table.same_as.get((row, col), ""))))
    for e in table.effects:
        at = [tuple(str(e[s]).split("/")) for s in ("a", "b")]
        printed = [tuple(str(e.get(f"paper_{s}") or e[s]).split("/")) for s in ("a", "b")]
        pubs = [_published(table, *p) for p in printed]
        elsewhere = bool(e.get("paper_a") or e.get("paper_b"))
        out.append(Declared(f"T{table.number}:{slug(e['label'])}", table.number, e["label"],
                            None if None in pubs else pubs[0] - pubs[1],
                            float(e.get("tol", TOL)),
                            (table.entry(*at[0]), table.entry(*at[1])), tuple(at),
                            str(e.get("construction", "")), str(e.get("same_as", "")),
                            tuple(printed) if elsewhere else (),
                            tuple(_printed_sd(table, p) for p in printed) if elsewhere
                            else ()))
    return out


def merge(declared: list[Declared]) -> list[Claim]:
    """The distinct claims of ``declared``, from the declarations alone (never from the
    runs, so a grid counts the same claims whatever ran): a place with ``same_as`` is
    one more place of the claim of the place it names, which may itself name another.
    A claim is in the order of its first place and judged on its first place's
    declaration; all its places state the same test in the same direction.

    Raises
    ------
    ValueError
        A ``same_as`` naming no place of ``declared``, a cycle of them, or places of
        one claim whose paper values call for different tests or directions.
    """
    by_id = {d.id: d for d in declared}

    def root(d: Declared) -> str:
        seen = [d.id]
        while d.same_as:
            if d.same_as not in by_id:
                raise ValueError(f"config/tables.yaml: {seen[-1]} same_as {d.same_as!r} "
                                 f"names no place of the tables")
            d = by_id[d.same_as]
            if d.id in seen:
                raise ValueError(f"config/tables.yaml: same_as cycle {' -> '.join(seen)}")
            seen.append(d.id)
        return d.id

    groups: dict[str, list[Declared]] = {}
    for d in declared:
        groups.setdefault(root(d), []).append(d)
    for places in groups.values():
        kinds = {(p.test, p.sign, p.construction) for p in places if p.paper is not None}
        if len(kinds) > 1:
            raise ValueError(
                "config/tables.yaml: places of one claim state different tests: "
                + "; ".join(f"{p.id} (paper {p.paper}, {p.test or 'no test'})"
                            for p in places))
    return [Claim(tuple(places)) for places in groups.values()]
