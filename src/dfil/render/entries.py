"""A resolved table's structure: entries (one body cell of a rendered table), rows,
tables, and the row operations applied once every entry is resolved (pure).

"Entry" here is a table's cell; a grid's cell (one training run) is
:class:`dfil.grid.Cell`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dfil import stats
from dfil.render import fmt


@dataclass
class Entry:
    """One resolved body cell: ``values`` per seed (stat), or a single ``value``."""

    kind: str
    values: tuple[float, ...] = ()
    value: float | None = None
    tex: str = ""
    fmt: str = "ms"
    digits: int = 1
    bold: bool = False
    keys: tuple[str, ...] = ()
    args: tuple = ()
    published: str | float | None = None

    @property
    def mean(self) -> float | None:
        if self.kind == "stat":
            return float(np.mean(self.values)) if self.values else None
        return self.value

    @property
    def std(self) -> float | None:
        if self.kind == "stat" and len(self.values) >= 2:
            return stats.describe(self.values).std
        return None

    @property
    def n(self) -> int:
        return len(self.values) if self.kind == "stat" else (0 if self.value is None else 1)

    def render(self) -> str:
        if self.kind == "tex":
            return self.tex
        m = self.mean
        out = {
            "ms": lambda: fmt.mean_std(m, self.std, self.n, self.digits),
            "mean": lambda: fmt.number(m, self.digits),
            "std": lambda: fmt.number(self.std, self.digits),
            "signed": lambda: fmt.signed(m, self.digits),
            "center": lambda: fmt.center(m, self.digits),
            "int": lambda: fmt.integer(m),
            "pct": lambda: fmt.percent(m, self.digits),
            "p": lambda: fmt.pvalue(m),
            "n": lambda: str(len(self.values)),
            "text": lambda: self.tex,
        }[self.fmt]()
        return fmt.bold(out) if self.bold else out


@dataclass
class Row:
    id: str
    label: str
    kind: str = "body"  # body | rule | section
    cells: dict[str, Entry] = field(default_factory=dict)
    hidden: bool = False


@dataclass
class Table:
    name: str
    number: int
    label: str
    caption: str
    columns: list[str]
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    substituted: set = field(default_factory=set)
    hidden: set = field(default_factory=set)
    #: The paper's contrasts between two of this table's cells (``effects:`` in
    #: ``config/tables.yaml``), whose direction the diff report checks.
    effects: list[dict] = field(default_factory=list)
    #: (row, column) -> the number the paper printed, rows without runs included.
    published: dict = field(default_factory=dict)
    #: The (row, column) of every published signed (Δ) cell, in table order.
    signed: list = field(default_factory=list)

    @property
    def visible_columns(self) -> list[str]:
        return [c for c in self.columns if c not in self.hidden]

    def cell(self, row: str, col: str) -> Entry | None:
        for r in self.rows:
            if r.id == row:
                return r.cells.get(col)
        return None


def row_ops(table: Table) -> None:
    """Fill the cells computed from other rows once every row is resolved: ``rows: [a,
    b]`` (row a's mean minus row b's; a list as a: the best of their means) and
    ``reduce: min|max`` over ``over``."""
    for col in table.columns:  # Holm across the visible rows' tests of one column
        cells = [r.cells[col] for r in table.rows if r.kind == "body" and not r.hidden
                 and col in r.cells and r.cells[col].kind == "holm"]
        if cells:
            tested = [(c, table.cell(r.id, c.args[0])) for r, c in
                      ((r, r.cells[col]) for r in table.rows if r.cells.get(col) in cells)]
            present = [(c, t.mean) for c, t in tested if t is not None and t.mean is not None]
            adjusted = stats.holm([p for _, p in present])
            for c in cells:
                c.kind = "value"
            for (c, _), p in zip(present, adjusted, strict=True):
                c.value = p
    for row in table.rows:
        for col, cell in row.cells.items():
            if cell.kind not in ("delta_rows", "reduce"):
                continue
            if cell.kind == "reduce":
                op, over = cell.args
                means = [c.mean for c in (table.cell(r, col) for r in over)
                         if c is not None and c.mean is not None]
                cell.kind, cell.value = "value", ({"min": min, "max": max}[op](means)
                                                  if means else None)
                continue
            a_ids, b_id = cell.args
            a_ids = [a_ids] if isinstance(a_ids, str) else a_ids
            a_means = [c.mean for c in (table.cell(a, col) for a in a_ids)
                       if c is not None and c.mean is not None]
            b = table.cell(b_id, col)
            cell.kind = "value"
            cell.value = (max(a_means) - b.mean) if a_means and b and b.mean is not None \
                else None


def has_data(row: Row) -> bool:
    return any((c.kind == "stat" and c.values) or (c.kind == "value" and c.value is not None)
               or (c.kind == "tex" and c.tex) for c in row.cells.values())


def tidy_rows(rows: list[Row]) -> list[Row]:
    """Drop rules and sections left without body rows under them."""
    out: list[Row] = []
    for i, row in enumerate(rows):
        if row.kind == "section" and not any(
                r.kind == "body" for r in rows[i + 1:i + 2]):
            continue
        if row.kind == "rule" and (not out or out[-1].kind == "rule"):
            continue
        out.append(row)
    while out and out[-1].kind == "rule":
        out.pop()
    return out
