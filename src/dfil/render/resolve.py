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

from dataclasses import replace

import numpy as np

from dfil import stats
from dfil.errors import ConfigError
from dfil.render.entries import Entry, Row, Table, has_data, row_ops, tidy_rows
from dfil.render.fmt import parse_published
from dfil.render.source import SELECTORS, Source


def _layer(*parts) -> dict:
    """Entry specs laid over each other, later ones winning key by key. Shallow on
    purpose: a ``where``, ``with`` or ``ref`` value is one unit, never merged."""
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
            raise ConfigError(f"table {name!r} is not declared (tables: {sorted(self.specs)})")
        spec = self.specs[name]
        outer, self.source.substituted = self.source.substituted, set()
        columns = [c["id"] for c in spec.get("columns", [])]
        colspec = {c["id"]: c for c in spec.get("columns", [])}
        table = Table(name, spec["number"], spec["label"], spec["caption"], columns, [],
                      hidden={c["id"] for c in spec.get("columns", []) if c.get("hidden")},
                      effects=list(spec.get("effects", [])))
        for rspec in spec.get("rows", []):
            table.rows.append(self._row(spec, colspec, rspec, table))
        for note in spec.get("footnotes", []):
            table.footnotes.append(self._cell(spec, note, Row("", ""), table).render())
        row_ops(table)
        self._bold(spec, table)
        table.published = {(r.id, c): parse_published(cell.published)[0]
                           for r in table.rows for c, cell in r.cells.items()
                           if cell.published is not None}
        table.signed = [(r.id, c) for r in table.rows for c, cell in r.cells.items()
                        if cell.fmt == "signed" and table.published.get((r.id, c)) is not None]
        present = [r for r in table.rows if r.kind != "body" or has_data(r)]
        dropped = [r.id for r in table.rows if r not in present and not r.hidden]
        if dropped:
            table.notes.append("Rows with no runs in this grid: " + ", ".join(dropped) + ".")
        table.rows = tidy_rows(present)
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
                row.cells[col] = Entry("tex", tex="")
                continue
            row_opts = {k: rspec[k] for k in ("fmt", "digits") if k in rspec}
            cspec = _layer(spec.get("defaults"), colspec[col], _where(rspec), row_opts,
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

    def _cell(self, spec, cspec, row, table) -> Entry:
        digits, form = cspec.get("digits", 1), cspec.get("fmt", "ms")
        base = _layer(spec.get("where"), _where(cspec))
        if "tex" in cspec and "with" in cspec:  # LaTeX with resolved cells filled in
            parts = {name: self._cell(spec, _layer(_where(cspec), sub), row, table).render()
                     for name, sub in cspec["with"].items()}
            return Entry("tex", tex=str(cspec["tex"]).format(**parts))
        if "tex" in cspec:
            return Entry("tex", tex=str(cspec["tex"]))
        if "ref" in cspec:
            tname, rid, cid = cspec["ref"].split("/")
            ref = self.table(tname)
            self.source.substituted |= ref.substituted
            table.keys |= ref.keys
            found = ref.cell(rid, cid)
            if found is None:
                return Entry("value", fmt=form, digits=digits)
            return replace(found, bold=False, fmt=cspec.get("fmt", found.fmt),
                                digits=cspec.get("digits", found.digits), published=None)
        if "delta_rows" in cspec:  # resolved once the whole table is (row_ops)
            return Entry("delta_rows", args=tuple(cspec["delta_rows"]),
                        fmt=cspec.get("fmt", "signed"), digits=digits)
        if "reduce" in cspec:
            return Entry("reduce", args=cspec["reduce"], fmt=form, digits=digits)
        if "holm" in cspec:  # resolved once the whole table is (row_ops)
            return Entry("holm", args=(cspec["holm"],), fmt="p")
        if "ratio" in cspec:  # of two cells' sample stds
            a, b = (row.cells.get(c) for c in cspec["ratio"])
            value = a.std / b.std if a and b and a.std and b.std else None
            return Entry("value", value=value, fmt="mean", digits=digits)
        if "delta" in cspec:
            a, b = (row.cells.get(c) for c in cspec["delta"])
            value = None if a is None or b is None or a.mean is None or b.mean is None \
                else a.mean - b.mean
            return Entry("value", value=value, fmt=cspec.get("fmt", "signed"), digits=digits)
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
            return Entry("value", value=value[cspec["show"]],
                        fmt="int" if cspec["show"] != "p" else "p")
        keys = self.source.keys(base)
        table.keys |= set(keys)
        values = self.source.values(base)
        return Entry("stat", values=tuple(values.to_numpy()), fmt=form, digits=digits,
                    keys=tuple(keys))

    def _test(self, cspec, base, table) -> Entry:
        a_where, b_where = (_layer(base, cspec.get(s)) for s in ("a", "b"))
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
        return Entry("value", value=None if value is None else float(value),
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


