"""Automatic flags on a resolved table, each explained for the reader (pure).

A flag is no error: it points at a pattern that a real result rarely shows and that
usually means the grid could not separate two settings (:data:`EXPLAIN`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dfil.render.entries import Entry, Table
from dfil.render.reuse import setting

EXPLAIN = {
    "identical columns": "two columns print the same numbers in every row: usually the "
                         "same runs, or settings the grid does not tell apart",
    "identical rows": "two rows print the same numbers in every column",
    "zero variance": "every seed gave the same value: a constant prediction or a "
                     "metric the seed does not move",
    "degenerate": "degenerate evidence: a run that predicts one class for every item or "
                  "a mean at or below its set's chance or majority-class rate (never "
                  "counted for a claim), predictions identical across seeds or zero "
                  "variance across seeds (a claim is judged on its per-seed differences; "
                  "the LaTeX table's footnote says which)",
    "equal to the digit": "two methods print the same mean ± std: check that they are "
                          "not the same model trained the same way",
    "run reused": "one set of runs fills two settings of this table",
    "stand-in across tables": "these runs stand in for a different paper setting in the "
                              "tables named (the grid's render map, not the paper, "
                              "reuses them): read them as one result, not two",
    "empty bold": "a bold that marks nothing: no value, or a column whose values are "
                  "all equal",
}


@dataclass(frozen=True)
class Flag:
    """One flag: its kind (a key of :data:`EXPLAIN`), the entries, (row, column), and
    for a flag across tables the other tables (``T25``)."""

    kind: str
    where: tuple[tuple[str, str], ...]
    also: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return EXPLAIN[self.kind]


def _numbers(table: Table) -> dict[tuple[str, str], Entry]:
    out = {}
    for row in table.rows:
        if row.hidden or row.kind != "body" or row.baseline:  # a test set's, not a run's
            continue
        for col in table.visible_columns:
            e = row.entries.get(col)
            if e is not None and e.kind in ("stat", "value") and e.mean is not None:
                out[(row.id, col)] = e
    return out


def shown(entry: Entry) -> str:
    """An entry as printed, bold aside."""
    return replace(entry, bold=False).render()


def _same(a: dict, b: dict) -> bool:
    shared = a.keys() & b.keys()
    return bool(shared) and all(shown(a[k]) == shown(b[k]) for k in shared)


def _lines(nums: dict, axis: int) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for key, e in nums.items():
        out.setdefault(key[axis], {})[key[1 - axis]] = e
    return out


def _classes(lines: dict[str, dict]) -> list[list[str]]:
    """Lines (rows or columns, in table order) that print the same numbers wherever two
    of them both print one: a line joins the first class whose every member it matches
    (matching over shared entries does not chain, so no class is joined through one),
    and each class of two or more is returned once."""
    classes: list[list[str]] = []
    for x in lines:
        home = next((c for c in classes if all(_same(lines[x], lines[y]) for y in c)), None)
        if home is None:
            classes.append([x])
        else:
            home.append(x)
    return [c for c in classes if len(c) > 1]


def table_flags(table: Table) -> list[Flag]:
    """Every flag of one table, in the order of :data:`EXPLAIN`; a pattern shared by
    several lines or entries is one flag naming them all. A whole row is named
    ``(row, "")``, a whole column ``("", column)``."""
    nums = _numbers(table)
    flags = [Flag("identical columns", tuple(("", c) for c in cls))
             for cls in _classes(_lines(nums, 1))]
    same_rows = _classes(_lines(nums, 0))
    flags += [Flag("identical rows", tuple((r, "") for r in cls)) for cls in same_rows]
    constant = tuple(k for k, e in nums.items() if e.n >= 2 and e.std == 0)
    flags += [Flag("zero variance", constant)] if constant else []
    marked = tuple(k for k, e in nums.items() if e.degenerate)
    flags += [Flag("degenerate", marked)] if marked else []
    for col, entries in _lines(nums, 1).items():
        printed: dict[str, list[str]] = {}
        for row, e in entries.items():
            if e.n >= 2:
                printed.setdefault(shown(e), []).append(row)
        flags += [Flag("equal to the digit", tuple((r, col) for r in rows))
                  for rows in printed.values() if len(rows) > 1  # said by identical rows:
                  and not any(set(rows) <= set(cls) for cls in same_rows)]
    seen: dict[frozenset, tuple[tuple[str, str], frozenset]] = {}
    for k, e in nums.items():  # stat entries: a delta or test reads its sides' runs
        if e.kind != "stat" or not e.reads:
            continue
        first = seen.setdefault(e.reads, (k, setting(e)))
        if first[1] != setting(e):  # the same number twice in one setting is layout
            flags.append(Flag("run reused", (first[0], k)))
    flags += _empty_bold(table, nums)
    return flags


def cross_table(tables: list[Table]) -> dict[str, list[Flag]]:
    """Per table (``T<n>``), one flag naming its entries whose runs another table
    prints for a different paper setting (the same single-cell reads under other
    render-map substitutions, seed sets aside: :func:`dfil.render.reuse.setting`) and
    those tables. The paper's own reuse of a run keeps its setting: never flagged."""
    seen: dict[frozenset, list[tuple[str, tuple[str, str], frozenset]]] = {}
    for t in tables:
        for (row, col), e in _numbers(t).items():
            if e.kind == "stat" and e.reads and len({k.rsplit("/seed", 1)[0]
                                                     for k, _ in e.reads}) == 1:
                seen.setdefault(e.reads, []).append((f"T{t.number}", (row, col), setting(e)))
    where: dict[str, list[tuple[str, str]]] = {}
    also: dict[str, set[str]] = {}
    for members in seen.values():
        for name, at, subs in members:
            others = {n for n, _, s in members if n != name and s != subs}
            if others:
                where.setdefault(name, []).append(at)
                also.setdefault(name, set()).update(others)
    return {name: [Flag("stand-in across tables", tuple(at),
                        tuple(sorted(also[name], key=lambda n: int(n[1:]))))]
            for name, at in where.items()}


def _empty_bold(table: Table, nums: dict) -> list[Flag]:
    out = []
    for row in table.rows:
        for col, e in row.entries.items():
            if not e.bold:
                continue
            column = [shown(x) for (r, c), x in nums.items() if c == col]
            if e.mean is None or (len(column) > 1 and len(set(column)) == 1):
                out.append(Flag("empty bold", ((row.id, col),)))
    return out
