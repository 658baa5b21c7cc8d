"""How a reader names a table's rows, columns and entries (pure): row labels as text
with their section (:func:`dfil.render.text.row_names`), column heads from the table's
LaTeX template, never the ids of ``config/tables.yaml``. The report, numbers.csv, the
paper diff and the claims all name entries this way.
"""

from __future__ import annotations

from dataclasses import dataclass

from dfil.render.entries import Table
from dfil.render.text import plain, template_heads


@dataclass(frozen=True)
class Labels:
    """How a table's rows and columns read: plain-text row labels by row id, column heads
    by column id, and the ``\\ref`` labels' table numbers."""

    rows: dict[str, str]
    columns: dict[str, str]

    def name(self, row: str, col: str) -> str:
        """An entry as a reader names it: row label, column head (a whole row: ``col``
        "", a whole column: ``row`` "")."""
        names = [self.rows.get(row, row) if row else "", self.columns.get(col, col) if col else ""]
        return ": ".join(n for n in names if n)


def labels(table: Table, heads: list[str], refs: dict[str, int]) -> Labels:
    """``heads``: the template's column heads (first: the label column); used when they
    match the visible columns one to one, else the column ids, spaced."""
    cols = table.visible_columns
    names = heads[1:] if len(heads) == len(cols) + 1 else [c.replace("_", " ") for c in cols]
    return Labels(table.row_names or {r.id: plain(r.label, refs) or r.id for r in table.rows},
                  dict(zip(cols, names, strict=True)))


def table_labels(tables: list[Table]) -> dict[str, Labels]:
    """Each table's :class:`Labels` by table name, heads from its template and ``\\ref``
    labels as the numbers of ``tables``."""
    refs = {t.label: t.number for t in tables}
    return {t.name: labels(t, template_heads(t.name, refs), refs) for t in tables}
