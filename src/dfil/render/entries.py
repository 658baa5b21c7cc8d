"""A resolved table's structure: entries (one body cell of a rendered table), rows,
tables, and the row operations applied once every entry is resolved (pure).

"Entry" here is a table's cell; a grid's cell (one training run) is
:class:`dfil.config.grid.Cell`. Entries are values: a step that changes one (a row operation,
bold) builds a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dfil import stats
from dfil.render import fmt
from dfil.render.source import Read, Substitution
from dfil.render.text import MARK
from dfil.render.voiding import sides_degenerate

#: Entries computed from other rows of their column once every row is resolved
#: (:func:`row_ops`): ``holm`` (args: the tested column), ``delta_rows`` (args: row a or a
#: tuple of rows, row b) and ``reduce`` (args: ``min``/``max``, the rows).
PENDING = ("holm", "delta_rows", "reduce")


@dataclass(frozen=True)
class Entry:
    """One resolved entry: ``kind`` ``stat`` (``values`` per seed), ``value`` (a single
    ``value``), ``tex`` (literal LaTeX) or one of :data:`PENDING` (``args``). ``reads``
    and ``substituted`` say which runs' metrics it was computed from and which render-map
    substitutions named them (an entry from another table: all of that table's);
    ``reason``: why it has no value, where that is known (:func:`dash_reason`)."""

    kind: str
    values: tuple[float, ...] = ()
    value: float | None = None
    tex: str = ""
    fmt: str = "ms"
    digits: int = 1
    bold: bool = False
    args: tuple = ()
    published: str | float | None = None
    reads: frozenset[Read] = frozenset()
    substituted: frozenset[Substitution] = frozenset()
    reason: str = ""
    #: A difference's two sides (a, b), whose seeds test it (``delta``, ``rows: [a, b]``;
    #: :mod:`dfil.claims.evidence`); () for any other entry.
    sides: tuple = ()
    #: The seed of each of ``values`` (a stat; pairs the sides of a paired test).
    seeds: tuple[str, ...] = ()
    #: Why its runs are degenerate evidence (one class for every item, identical
    #: predictions across seeds, zero variance: :mod:`dfil.claims.degenerate`), a
    #: difference's from its sides (:func:`sides_degenerate`); "" when they are not.
    degenerate: str = ""

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

    @property
    def compared(self) -> tuple[float | None, float | None, tuple[float, ...]]:
        """(number, its std, per-seed values) as set beside the paper's: what a ``std``
        entry prints is its seeds' std, one value with no spread of its own; any other
        entry its mean, std and (a stat) its seeds' values (shape (n,))."""
        if self.fmt == "std":
            return self.std, None, ()
        return self.mean, self.std, self.values if self.kind == "stat" else ()

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
    entries: dict[str, Entry] = field(default_factory=dict)
    hidden: bool = False
    #: ``majority`` or ``chance``: a test set's baseline row (:mod:`dfil.render.baselines`).
    baseline: str = ""


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
    #: Every (run key, metric) its entries read, tables it refers to included.
    reads: frozenset[Read] = frozenset()
    substituted: frozenset[Substitution] = frozenset()
    hidden: set = field(default_factory=set)
    #: Row id -> the row's name as text, its section included
    #: (:func:`dfil.render.text.row_names`): rows left out for want of runs too.
    row_names: dict[str, str] = field(default_factory=dict)
    #: The paper's contrasts between two of this table's entries (``effects:`` in
    #: ``config/tables.yaml``), whose direction the diff report checks.
    effects: list[dict] = field(default_factory=list)
    #: (row, column) -> the number the paper printed, rows without runs included.
    published: dict = field(default_factory=dict)
    #: The (row, column) of every published signed (Δ) entry, in table order.
    signed: list = field(default_factory=list)
    #: (row, column) of a signed entry -> the id of the place whose claim it prints
    #: again (rows' ``same_as:`` in ``config/tables.yaml``), rows without runs included.
    same_as: dict = field(default_factory=dict)
    #: How its runs differ in code commit or library versions ("" when they do not;
    #: :func:`dfil.results.origin.origin_note`); the notes say it too.
    mixed: str = ""

    @property
    def keys(self) -> set[str]:
        """The grid's run keys whose numbers the table prints (what its rule waits for)."""
        return {key for key, _ in self.reads}

    @property
    def visible_columns(self) -> list[str]:
        return [c for c in self.columns if c not in self.hidden]

    def entry(self, row: str, col: str) -> Entry | None:
        """The entry of row ``row``, column ``col`` (``None`` if there is none)."""
        return _find(self.rows, row, col)


def _find(rows: list[Row], row: str, col: str) -> Entry | None:
    for r in rows:
        if r.id == row:
            return r.entries.get(col)
    return None


def _laid_out_empty(entry: Entry | None) -> bool:
    """Whether a row has no entry in a column by the paper's layout (``cells: {col:
    null}`` in tables.yaml, or none at all)."""
    return entry is None or (entry.kind == "tex" and not entry.tex)


def _present(rows: list[Row], ids, col: str) -> list[Entry]:
    """The entries of column ``col`` in rows ``ids`` that have a mean."""
    found = (_find(rows, r, col) for r in ids)
    return [e for e in found if e is not None and e.mean is not None]


def _holm(rows: list[Row], columns: list[str]) -> list[Row]:
    """``holm: <column>`` entries: that column's p-values Holm-adjusted across the visible
    body rows (an entry whose row has no p-value stays empty)."""
    rows = [replace(r, entries=dict(r.entries)) for r in rows]
    for col in columns:
        at = [i for i, r in enumerate(rows) if r.kind == "body" and not r.hidden
              and col in r.entries and r.entries[col].kind == "holm"]
        tested = {i: _find(rows, rows[i].id, rows[i].entries[col].args[0]) for i in at}
        present = [i for i in at if tested[i] is not None and tested[i].mean is not None]
        adjusted = dict(zip(present, stats.holm([tested[i].mean for i in present]),
                            strict=True))
        for i in at:
            rows[i].entries[col] = replace(rows[i].entries[col], kind="value", args=(),
                                         value=adjusted.get(i))
    return rows


def _from_rows(rows: list[Row], col: str, entry: Entry) -> Entry:
    """A ``delta_rows`` or ``reduce`` entry of column ``col`` resolved over ``rows``."""
    if entry.kind == "reduce":
        op, over = entry.args
        means = [e.mean for e in _present(rows, over, col)]
        return replace(entry, kind="value", args=(),
                       value={"min": min, "max": max}[op](means) if means else None)
    a_id, b_id = entry.args
    a, b = _find(rows, a_id, col), _find(rows, b_id, col)
    if _laid_out_empty(b) or _laid_out_empty(a):
        # T3's Δ vs fine-tune under Oracle: fine-tune has none there, nor in the paper
        return replace(entry, kind="value", args=(), value=None,
                       reason="a row it subtracts has no entry here (as in the paper)")
    if a is None or b is None or a.mean is None or b.mean is None:
        return replace(entry, kind="value", args=(), value=None)
    return replace(entry, kind="value", args=(), value=a.mean - b.mean, sides=(a, b),
                   degenerate=sides_degenerate((a, b)))


def row_ops(table: Table) -> list[Row]:
    """The table's rows with every entry computed from other rows resolved: first the
    Holm columns, then row by row ``rows: [a, b]`` (row a's mean minus row b's) and
    ``reduce: min|max`` over ``over`` (a row sees the rows above it resolved)."""
    rows = _holm(table.rows, table.columns)
    for i, row in enumerate(rows):
        if any(e.kind in ("delta_rows", "reduce") for e in row.entries.values()):
            rows[i] = replace(row, entries={
                col: _from_rows(rows, col, e) if e.kind in ("delta_rows", "reduce") else e
                for col, e in row.entries.items()})
    return rows


def has_data(row: Row) -> bool:
    return any((c.kind == "stat" and c.values) or (c.kind == "value" and c.value is not None)
               or (c.kind == "tex" and c.tex) for c in row.entries.values())


def dash_reason(entry: Entry) -> str:
    """Why ``entry`` prints a dash: its own reason, else what its reads say."""
    if entry.reason:
        return entry.reason
    if entry.kind == "stat":
        if entry.fmt == "std" and len(entry.values) == 1:  # T24's, T26's stds
            return "a std needs two seeds"
        return ("not run: the grid has no run of that setting" if not entry.reads
                else "its runs lack the metric or failed")
    return "not computable from the runs this grid has"


def dash_note(rows: list[Row], columns: list[str], footnotes: list[Entry] = ()) -> str:
    """The table's note explaining its dashes, one reason each (plain text; "" when the
    visible body rows and ``footnotes`` print none): a footnote's dash (a test with one
    seed) says why as a body entry's does."""
    reasons = [f.reason for f in footnotes if fmt.MISSING in f.render() and f.reason]
    for row in rows:
        if row.kind != "body" or row.hidden:
            continue
        for col in columns:
            e = row.entries.get(col)
            if e is not None and e.render() == fmt.MISSING:
                reasons.append(dash_reason(e))
    unique = list(dict.fromkeys(reasons))
    return ("— : " + "; ".join(unique) + ".") if unique else ""




def used_footnotes(footnotes: list[str], shown: str) -> list[str]:
    """``footnotes`` with every part whose mark (a part runs from its mark to the next)
    appears nowhere in ``shown`` (the caption, row labels and entries printed) dropped,
    and a footnote left empty dropped."""
    out = []
    for text in footnotes:
        marks = list(MARK.finditer(text))
        ends = [m.start() for m in marks[1:]] + [len(text)] if marks else []
        kept = text[:marks[0].start()] if marks else text
        kept += "".join(text[m.start():end] for m, end in zip(marks, ends, strict=True)
                        if m.group(0) in shown)
        if kept.strip():
            out.append(" ".join(kept.split()))
    return out


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
