"""Which table cells each run's metrics feed (pure): for every run a table reads, every
metric read from it and the cells of tables.html it goes into, so a run's page lists the
numbers behind the tables and links back to each cell (anchors :func:`cell_anchor`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from dfil.render.entries import Table


def cell_anchor(table_id: str, row_id: str, column_id: str) -> str:
    """The id of one number's cell in tables.html (``T5.dfil.acc``): letters, digits and
    ``._-`` only, so it reads the same in a URL, an HTML id and a CSS selector."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{table_id}.{row_id}.{column_id}")


def run_feeds(tables: Iterable[Table], numbers: Iterable[dict]) -> dict[str, dict[str, list]]:
    """Run key -> metric -> the cells it feeds, each ``{"href", "text"}``; ``numbers``:
    the rows of numbers.csv (a cell with one has an anchor, named by its row and column
    labels). A metric that feeds no printed number (a hidden row, a test's other side
    read through a referenced table) links to its table's section."""
    named = {(r["table"], r["row_id"], r["column_id"]): f"{r['table']} {r['row']} | {r['column']}"
             for r in numbers}
    out: dict[str, dict[str, list]] = {}
    for t in tables:
        tid = f"T{t.number}"
        for row in t.rows:
            for col, entry in row.entries.items():
                text = named.get((tid, row.id, col))
                if text is None:
                    continue
                cell = {"href": f"tables.html#{cell_anchor(tid, row.id, col)}", "text": text}
                for key, metric in entry.reads:
                    cells = out.setdefault(key, {}).setdefault(metric, [])
                    if cell not in cells:
                        cells.append(cell)
        for key, metric in t.reads:
            cells = out.setdefault(key, {}).setdefault(metric, [])
            if not any(c["href"].startswith(f"tables.html#{tid}.") for c in cells):
                cells.append({"href": f"tables.html#{tid}", "text": f"{tid} (read by the table, "
                              "no number of its own)"})
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}
