"""A table declared in ``config/tables.yaml`` -> a resolved table of numbers (pure).

A table has ``columns`` and ``rows``; a body cell's selector is the table's ``where``,
then its column's, then its row's, then the row's ``cells.<column>`` override, merged in
that order (``config/tables.yaml`` documents the keys). A cell is one of

- a **stat** (the default): the per-seed values of a metric for one grid cell; printed as
  mean±sample std (ddof=1), or the mean, a center, a count, a percentage (``fmt``);
- a **delta**: ``delta: [a, b]``, the difference of the means of columns ``a`` and ``b``
  of the same row (``rows: [a, b]`` in a row spec: of rows, column by column; a list in
  place of ``a`` takes the best of those rows' means);
- a **test**: ``test: welch | paired_t | wilcoxon | dz | tost`` (with ``margin``),
  comparing ``a`` and ``b`` (selectors merged over the cell's); ``holm: <column>`` is
  that column's p-values Holm-adjusted across the table's rows;
- **wins**: how many listed (row, column) cells beat the row's ``against`` column, and
  the one-sided binomial p of that count (``show: k | n | p``);
- a **ratio** of two columns' sample stds; a row with ``reduce: min | max`` over rows;
- a **ref**: ``ref: table/row/column``, another table's resolved cell;
- a **tex**: literal LaTeX from the spec (the qualitative tables).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from dfil import stats
from dfil.render import fmt
from dfil.render.source import SELECTORS, Source


@dataclass
class Cell:
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
    cells: dict[str, Cell] = field(default_factory=dict)
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

    @property
    def visible_columns(self) -> list[str]:
        return [c for c in self.columns if c not in self.hidden]

    def cell(self, row: str, col: str) -> Cell | None:
        for r in self.rows:
            if r.id == row:
                return r.cells.get(col)
        return None


def _merge(*parts) -> dict:
    out: dict = {}
    for part in parts:
        out.update(part or {})
    return out


def _where(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k in SELECTORS}


class Resolver:
    """Resolves tables of one spec against one :class:`Source`; tables referenced by
    ``ref`` cells are resolved once and reused."""

    def __init__(self, specs: dict, source: Source):
        self.specs = specs
        self.source = source
        self.done: dict[str, Table] = {}

    def table(self, name: str) -> Table:
        if name in self.done:
            return self.done[name]
        if name not in self.specs:
            raise KeyError(f"table {name!r} is not declared (tables: {sorted(self.specs)})")
        spec = self.specs[name]
        outer, self.source.substituted = self.source.substituted, set()
        columns = [c["id"] for c in spec.get("columns", [])]
        colspec = {c["id"]: c for c in spec.get("columns", [])}
        table = Table(name, spec["number"], spec["label"], spec["caption"], columns, [],
                      hidden={c["id"] for c in spec.get("columns", []) if c.get("hidden")})
        for rspec in spec.get("rows", []):
            table.rows.append(self._row(spec, colspec, rspec, table))
        for note in spec.get("footnotes", []):
            table.footnotes.append(self._cell(spec, note, Row("", ""), table).render())
        _row_ops(table)
        self._bold(spec, table)
        present = [r for r in table.rows if r.kind != "body" or _has_data(r)]
        dropped = [r.id for r in table.rows if r not in present and not r.hidden]
        if dropped:
            table.notes.append("Rows with no runs in this grid: " + ", ".join(dropped) + ".")
        table.rows = _tidy(present)
        table.substituted |= self.source.substituted
        self.source.substituted = outer | table.substituted
        self.done[name] = table
        return table

    def _row(self, spec, colspec, rspec, table) -> Row:
        if "rule" in rspec:
            return Row(id="", label="", kind="rule")
        if "section" in rspec:
            return Row(id="", label=rspec["section"], kind="section")
        row = Row(id=str(rspec["id"]), label=rspec.get("label", str(rspec["id"])),
                  hidden=bool(rspec.get("hidden")))
        published = rspec.get("paper", {})
        for col in table.columns:
            override = (rspec.get("cells") or {}).get(col, {})
            if override is None:  # an empty cell by the paper's layout
                row.cells[col] = Cell("tex", tex="")
                continue
            row_opts = {k: rspec[k] for k in ("fmt", "digits") if k in rspec}
            cspec = _merge(spec.get("defaults"), colspec[col], _where(rspec), row_opts,
                           override)
            cspec.pop("id", None)
            if "rows" in rspec:  # a difference-of-rows row, whatever the column holds
                cspec = {"delta_rows": rspec["rows"], "fmt": rspec.get("fmt", "signed"),
                         "digits": cspec.get("digits", 1)}
            elif "reduce" in rspec:  # min/max of other rows, column by column
                cspec = {"reduce": (rspec["reduce"], tuple(rspec["over"])),
                         "fmt": cspec.get("fmt", "mean"), "digits": cspec.get("digits", 1)}
            cell = self._cell(spec, cspec, row, table)
            cell.published = published.get(col)
            row.cells[col] = cell
        return row

    def _cell(self, spec, cspec, row, table) -> Cell:
        digits, form = cspec.get("digits", 1), cspec.get("fmt", "ms")
        base = _merge(spec.get("where"), _where(cspec))
        if "tex" in cspec and "with" in cspec:  # LaTeX with resolved cells filled in
            parts = {name: self._cell(spec, _merge(_where(cspec), sub), row, table).render()
                     for name, sub in cspec["with"].items()}
            return Cell("tex", tex=str(cspec["tex"]).format(**parts))
        if "tex" in cspec:
            return Cell("tex", tex=str(cspec["tex"]))
        if "ref" in cspec:
            tname, rid, cid = cspec["ref"].split("/")
            ref = self.table(tname)
            self.source.substituted |= ref.substituted
            table.keys |= ref.keys
            found = ref.cell(rid, cid)
            if found is None:
                return Cell("value", fmt=form, digits=digits)
            return replace(found, bold=False, fmt=cspec.get("fmt", found.fmt),
                                digits=cspec.get("digits", found.digits), published=None)
        if "delta_rows" in cspec:  # resolved once the whole table is (_row_ops)
            return Cell("delta_rows", args=tuple(cspec["delta_rows"]),
                        fmt=cspec.get("fmt", "signed"), digits=digits)
        if "reduce" in cspec:
            return Cell("reduce", args=cspec["reduce"], fmt=form, digits=digits)
        if "holm" in cspec:  # resolved once the whole table is (_row_ops)
            return Cell("holm", args=(cspec["holm"],), fmt="p")
        if "ratio" in cspec:  # of two cells' sample stds
            a, b = (row.cells.get(c) for c in cspec["ratio"])
            value = a.std / b.std if a and b and a.std and b.std else None
            return Cell("value", value=value, fmt="mean", digits=digits)
        if "delta" in cspec:
            a, b = (row.cells.get(c) for c in cspec["delta"])
            value = None if a is None or b is None or a.mean is None or b.mean is None \
                else a.mean - b.mean
            return Cell("value", value=value, fmt=cspec.get("fmt", "signed"), digits=digits)
        if "test" in cspec:
            return self._test(cspec, base, table)
        if "wins" in cspec:  # rows of this table whose named cell beats `against`
            pairs = [(table.cell(r, c), table.cell(r, cspec["against"]))
                     for r, c in cspec["wins"]]
            pairs = [(a.mean, b.mean) for a, b in pairs
                     if a and b and a.mean is not None and b.mean is not None]
            k = sum(a > b for a, b in pairs)
            value = {"k": k, "n": len(pairs),
                     "p": stats.binomial(k, len(pairs)).pvalue if pairs else None}
            return Cell("value", value=value[cspec["show"]],
                        fmt="int" if cspec["show"] != "p" else "p")
        keys = self.source.keys(base)
        table.keys |= set(keys)
        values = self.source.values(base)
        return Cell("stat", values=tuple(values.to_numpy()), fmt=form, digits=digits,
                    keys=tuple(keys))

    def _test(self, cspec, base, table) -> Cell:
        a_where, b_where = (_merge(base, cspec.get(s)) for s in ("a", "b"))
        table.keys |= set(self.source.keys(a_where)) | set(self.source.keys(b_where))
        a, b = self.source.values(a_where), self.source.values(b_where)
        kind = cspec["test"]
        paired = kind in ("paired_t", "wilcoxon", "dz")
        if paired:
            common = a.index.intersection(b.index)
            a, b = a[common], b[common]
        enough = min(len(a), len(b)) >= 2
        degenerate = enough and (np.all(a.to_numpy() == b.to_numpy()) if paired
                                 else np.ptp(np.r_[a, b]) == 0)
        if not enough or degenerate:
            value = None
        elif kind == "welch":
            value = stats.welch(a, b).pvalue
        elif kind == "paired_t":
            value = stats.paired_t(a, b).pvalue
        elif kind == "wilcoxon":
            value = stats.wilcoxon(a, b).pvalue
        elif kind == "dz":
            value = stats.cohens_dz(a, b)
        elif kind == "tost":  # equivalence within +-margin (the scaled metric's units)
            value = stats.tost(a, b, float(cspec["margin"])).pvalue
        else:
            raise KeyError(f"unknown test {kind!r}")
        return Cell("value", value=None if value is None else float(value),
                    fmt=cspec.get("fmt", "p"), digits=cspec.get("digits", 2))

    def _bold(self, spec, table) -> None:
        for rule in spec.get("bold", []):
            among = rule["among"]
            groups = ([[(r, c) for c in among] for r in table.rows if r.kind == "body"]
                      if rule["by"] == "row" else
                      [[(r, c) for r in table.rows if r.id in among] for c in rule["cols"]])
            for group in groups:
                cells = [r.cells.get(c) for r, c in group]
                means = [x.mean for x in cells if x is not None and x.mean is not None]
                if len(means) >= 2:
                    best = max(means)
                    for x in cells:
                        if x is not None and x.mean is not None and x.mean == best:
                            x.bold = True


def _row_ops(table: Table) -> None:
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


def _has_data(row: Row) -> bool:
    return any((c.kind == "stat" and c.values) or (c.kind == "value" and c.value is not None)
               or (c.kind == "tex" and c.tex) for c in row.cells.values())


def _tidy(rows: list[Row]) -> list[Row]:
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
