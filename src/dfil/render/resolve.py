"""A table declared in ``config/tables.yaml`` -> a resolved table of numbers (pure).

A table has ``columns`` and ``rows``; an entry's (a body cell's) selector is the table's
``where``, then its column's, then its row's, then the row's ``cells.<column>`` override,
merged in that order (``config/tables.yaml`` documents the keys). An entry is one of

- a **stat** (the default): the per-seed values of a metric for one grid cell; printed as
  mean±sample std (ddof=1), or the mean, a center, a count, a percentage (``fmt``);
- a **delta**: ``delta: [a, b]``, the difference of the means of columns ``a`` and ``b``
  of the same row (``rows: [a, b]`` in a row spec: of rows, column by column; a list in
  place of ``a`` takes the best of those rows' means);
- a **test**: ``test: welch | paired_t | wilcoxon | dz | tost`` (with ``margin``),
  comparing ``a`` and ``b`` (selectors merged over the entry's); ``holm: <column>`` is
  that column's p-values Holm-adjusted across the table's rows;
- **wins**: how many listed (row, column) entries beat the row's ``against`` column, and
  the one-sided binomial p of that count (``show: k | n | p``);
- a **ratio** of two columns' sample stds; a row with ``reduce: min | max`` over rows;
- a **ref**: ``ref: table/row/column``, another table's resolved entry;
- a **tex**: literal LaTeX from the spec (the qualitative tables); with ``with``, its
  placeholders filled by entries, and ``same`` the text when they all print the same.

Every entry carries what it read and the render-map substitutions that named it; a
table's are the union of its entries'. Where two entries of one table would print the
same runs for two paper settings, all but one are *not run* (:mod:`dfil.render.reuse`),
and every dash a table prints has its reason in the table's notes, as has a table whose
runs differ in code commit or library versions (:mod:`dfil.results.origin`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dfil import stats
from dfil.contracts.failure import NOT_RUN
from dfil.render.baselines import baseline_entry, baseline_metric, like_row
from dfil.render.caption_settings import apply_settings
from dfil.render.entries import Entry, Row, Table, dash_reason
from dfil.render.finish import finish, union
from dfil.render.fmt import MISSING
from dfil.render.probe_sizes import probe_note
from dfil.render.reuse import not_run, reused
from dfil.render.source import SELECTORS, Source
from dfil.render.voiding import sides_degenerate
from dfil.results.origin import origin_note
from dfil.util.errors import ConfigError

#: An entry spec's kind: the first of these keys it holds (``stat`` when none).
KINDS = ("tex", "ref", "holm", "ratio", "delta", "test", "wins")
#: Tests on seeds common to both samples.
PAIRED = ("paired_t", "wilcoxon", "dz")
#: Each test's number from two samples and the entry spec (``margin``: TOST's, in the
#: scaled metric's units).
TESTS = {
    "welch": lambda a, b, espec: stats.welch(a, b).pvalue,
    "paired_t": lambda a, b, espec: stats.paired_t(a, b).pvalue,
    "wilcoxon": lambda a, b, espec: stats.wilcoxon(a, b).pvalue,
    "dz": lambda a, b, espec: stats.cohens_dz(a, b),
    "tost": lambda a, b, espec: stats.tost(a, b, float(espec["margin"])).pvalue,
}


def entry_kind(espec: Mapping) -> str:
    """Which kind of entry ``espec`` declares (:data:`KINDS`, else ``stat``)."""
    return next((k for k in KINDS if k in espec), "stat")


def declared_fmt(spec: Mapping, row: str, col: str) -> str:
    """The format the entry at ``row``, ``col`` of table ``spec`` declares, whatever ran
    (a difference of rows or a ``delta`` column: ``signed``; else ``ms`` unless set):
    a reference to it has a format even where its row has no runs."""
    rspec = next((r for r in spec.get("rows", []) if str(r.get("id")) == row), {})
    if "rows" in rspec:
        return rspec.get("fmt", "signed")
    colspec = next((c for c in spec.get("columns", []) if c["id"] == col), {})
    opts = {k: rspec[k] for k in ("fmt", "digits") if k in rspec}
    espec = _layer(spec.get("defaults"), colspec, opts, (rspec.get("cells") or {}).get(col))
    return espec.get("fmt", "signed" if entry_kind(espec) == "delta" else "ms")


def _layer(*parts) -> dict:
    """Entry specs laid over each other, later ones winning key by key. Shallow on
    purpose: a ``where``, ``with`` or ``ref`` value is one unit, never merged."""
    out: dict = {}
    for part in parts:
        out.update(part or {})
    return out


def _where(spec: Mapping) -> dict:
    return {k: v for k, v in spec.items() if k in SELECTORS}


@dataclass(frozen=True)
class _At:
    """Where an entry is resolved: its table's spec, the table so far, its row so far."""

    spec: Mapping
    table: Table
    row: Row


class Resolver:
    """Resolves tables of one spec against one :class:`Source`; tables referenced by
    ``ref`` entries are resolved once and reused."""

    def __init__(self, specs: Mapping, source: Source):
        self.specs = specs
        self.source = source
        self.done: dict[str, Table] = {}
        #: per table, (row, column) -> why that entry is not run (:func:`reused`)
        self.reused: dict[str, dict[tuple[str, str], str]] = {}
        #: ``\ref`` label -> table number, for rows named in notes (``Tab. 3``)
        self.refs = {s["label"]: s["number"] for s in specs.values()}

    def table(self, name: str) -> Table:
        if name in self.done:
            return self.done[name]
        if name not in self.specs:
            raise ConfigError(f"table {name!r} is not declared (tables: {sorted(self.specs)})")
        spec = self.specs[name]
        table = self._rows(name, spec)
        marks = reused(table.rows)
        if marks:  # again, with those entries not run (entries after them may use them)
            self.reused[name] = marks
            table = self._rows(name, spec)
        footnotes = [self._entry(note, _At(spec, table, Row("", "")))
                     for note in spec.get("footnotes", [])]
        footnotes = [f for f in footnotes if f.tex != MISSING]  # every number in it a dash
        table, unused = self._settings(spec, table, footnotes)
        done = finish(spec, table, footnotes, self.refs)
        note = probe_note(spec.get("probes", {}), done.keys, self.source.value)
        mixed = origin_note(self.source.origins, done.keys)
        self.done[name] = replace(done, caption=f"{done.caption} {note}".rstrip(),
                                  mixed=mixed,
                                  notes=[*done.notes, *unused, *([mixed] if mixed else [])])
        return self.done[name]

    def _settings(self, spec: Mapping, table: Table,
                  footnotes: list[Entry]) -> tuple[Table, list[str]]:
        """``table`` with its caption and row labels stating only settings its runs used
        (:func:`apply_settings`), and the notes on what was left out."""
        if not spec.get("settings"):
            return table, []
        cells = getattr(self.source.grid, "cells", {})

        def configs(entries) -> list[Mapping]:
            keys = {key for e in entries for key, _ in e.reads}
            return [cells[k].config for k in sorted(keys) if k in cells]

        body = [r for r in table.rows if r.kind == "body"]
        caption, labels, unused = apply_settings(
            table.caption, {r.id: r.label for r in body}, spec.get("settings", []),
            configs([e for r in body for e in r.entries.values()] + footnotes),
            {r.id: configs(r.entries.values()) for r in body})
        rows = [replace(r, label=labels[r.id]) if r.kind == "body" else r for r in table.rows]
        return replace(table, caption=caption, rows=rows), unused

    def _rows(self, name: str, spec: Mapping) -> Table:
        """Table ``name`` with its rows resolved, nothing computed across rows yet."""
        columns = spec.get("columns", [])
        table = Table(name, spec["number"], spec["label"], spec["caption"],
                      [c["id"] for c in columns], [],
                      hidden={c["id"] for c in columns if c.get("hidden")},
                      effects=list(spec.get("effects", [])),
                      same_as={(str(r["id"]), col): str(place)
                               for r in spec.get("rows", []) if "id" in r
                               for col, place in (r.get("same_as") or {}).items()})
        for rspec in spec.get("rows", []):
            table.rows.append(self._row(spec, rspec, table))
        return table

    def _row(self, spec: Mapping, rspec: Mapping, table: Table) -> Row:
        if "rule" in rspec:
            return Row(id="", label="", kind="rule")
        if "section" in rspec:
            return Row(id="", label=rspec["section"], kind="section")
        row = Row(id=str(rspec["id"]), label=rspec.get("label", str(rspec["id"])),
                  hidden=bool(rspec.get("hidden")), baseline=rspec.get("baseline", ""))
        at = _At(spec, table, row)
        for colspec in spec.get("columns", []):  # an entry may use the entries before it
            row.entries[colspec["id"]] = (self._baseline(colspec, rspec, at) if row.baseline
                                          else self._column_entry(colspec, rspec, at))
        return row

    def _baseline(self, colspec: Mapping, rspec: Mapping, at: _At) -> Entry:
        """A majority-class or chance entry (:mod:`dfil.render.baselines`)."""
        like = like_row(at.spec, rspec)
        shown = at.table.entry(str(like["id"]), colspec["id"])  # resolved above this row
        if shown is not None and shown.reason.startswith("not run"):
            return baseline_entry([], 1, rspec["baseline"], ran=False)  # a reused run
        override = (like.get("cells") or {}).get(colspec["id"], {})
        espec = _layer(at.spec.get("defaults"), colspec, _where(like), override)
        metric = baseline_metric(_layer(at.spec.get("where"), espec), rspec["baseline"])
        if override is None or "rows" in like or entry_kind(espec) != "stat" or not metric:
            return Entry("tex", tex="")
        sample = self.source.sample(_layer(at.spec.get("where"), _where(espec),
                                           {"metric": metric}))
        return baseline_entry(sample.values.to_numpy(), espec.get("digits", 1),
                              rspec["baseline"], bool(sample.reads))

    def _column_entry(self, colspec: Mapping, rspec: Mapping, at: _At) -> Entry:
        """The entry of row ``rspec`` in column ``colspec``, with its published number."""
        col = colspec["id"]
        override = (rspec.get("cells") or {}).get(col, {})
        if override is None:  # an empty entry by the paper's layout
            return Entry("tex", tex="")
        row_opts = {k: rspec[k] for k in ("fmt", "digits") if k in rspec}
        espec = _layer(at.spec.get("defaults"), colspec, _where(rspec), row_opts, override)
        espec.pop("id", None)
        digits = espec.get("digits", 1)
        if "rows" in rspec:  # a difference-of-rows row, whatever the column holds
            a, b = rspec["rows"]
            entry = Entry("delta_rows", args=(a if isinstance(a, str) else tuple(a), b),
                          fmt=rspec.get("fmt", "signed"), digits=digits)
        elif "reduce" in rspec:  # min/max of other rows, column by column
            entry = Entry("reduce", args=(rspec["reduce"], tuple(rspec["over"])),
                          fmt=espec.get("fmt", "mean"), digits=digits)
        else:
            entry = self._entry(espec, at)
        why = self.reused.get(at.table.name, {}).get((at.row.id, col))
        if why is not None:
            entry = not_run(entry, why)
        return replace(entry, published=rspec.get("paper", {}).get(col))

    def _entry(self, espec: Mapping, at: _At) -> Entry:
        """The entry ``espec`` declares, resolved by its kind (:func:`entry_kind`)."""
        resolve = {"tex": self._tex, "ref": self._ref, "holm": _holm, "ratio": _ratio,
                   "delta": _delta, "test": self._test, "wins": _wins,
                   "stat": self._stat}[entry_kind(espec)]
        return resolve(espec, at)

    def _stat(self, espec: Mapping, at: _At) -> Entry:
        sample = self.source.sample(_layer(at.spec.get("where"), _where(espec)))
        values = tuple(sample.values.to_numpy())
        return Entry("stat", values=values, seeds=tuple(map(str, sample.values.index)),
                     fmt=espec.get("fmt", "ms"), digits=espec.get("digits", 1),
                     reads=sample.reads, substituted=sample.substituted, reason=sample.failed,
                     degenerate=self.source.degenerate(values, sample.reads))

    def _tex(self, espec: Mapping, at: _At) -> Entry:
        """Literal LaTeX; with ``with``, its {placeholders} filled by those entries."""
        if "with" not in espec:
            return Entry("tex", tex=str(espec["tex"]))
        parts = {name: self._entry(_layer(_where(espec), sub), at)
                 for name, sub in espec["with"].items()}
        shown = {n: e.render() for n, e in parts.items()}
        same = "same" in espec and len(set(shown.values())) == 1
        text = str(espec["same" if same else "tex"]).format(**shown)
        missing = [dash_reason(e) for e in parts.values() if e.render() == MISSING]
        if len(missing) == len(parts):  # nothing to say: a dash, with why
            text = MISSING
        return Entry("tex", tex=text, reads=union(parts.values(), "reads"),
                     substituted=union(parts.values(), "substituted"),
                     reason="; ".join(dict.fromkeys(missing)))

    def _ref(self, espec: Mapping, at: _At) -> Entry:
        """Another table's entry; this table then reads everything that table reads."""
        tname, rid, cid = espec["ref"].split("/")
        ref = self.table(tname)
        found = ref.entry(rid, cid)
        if found is None:  # its row has no runs here: what it would print, empty
            found = Entry("value", fmt=espec.get("fmt", declared_fmt(self.specs[tname], rid,
                                                                     cid)),
                          digits=espec.get("digits", 1))
        return replace(found, bold=False, fmt=espec.get("fmt", found.fmt),
                       digits=espec.get("digits", found.digits), published=None,
                       reads=ref.reads, substituted=ref.substituted)

    def _test(self, espec: Mapping, at: _At) -> Entry:
        base = _layer(at.spec.get("where"), _where(espec))
        a, b = (self.source.sample(_layer(base, espec.get(side))) for side in ("a", "b"))
        value = _test_value(espec, a.values, b.values)
        why = "" if value is not None else (a.failed or b.failed
                                            or untestable(espec, a.values, b.values))
        return Entry("value", value=value, fmt=espec.get("fmt", "p"),
                     digits=espec.get("digits", 2), reads=a.reads | b.reads,
                     substituted=a.substituted | b.substituted, reason=why)


def _holm(espec: Mapping, at: _At) -> Entry:
    """Resolved once the whole table is (:func:`dfil.render.entries.row_ops`)."""
    return Entry("holm", args=(espec["holm"],), fmt="p")


def _ratio(espec: Mapping, at: _At) -> Entry:
    """Of two entries' sample stds, in the same row."""
    a, b = (at.row.entries.get(c) for c in espec["ratio"])
    value = a.std / b.std if a and b and a.std and b.std else None
    return Entry("value", value=value, fmt="mean", digits=espec.get("digits", 1))


def _delta(espec: Mapping, at: _At) -> Entry:
    a, b = (at.row.entries.get(c) for c in espec["delta"])
    value = None if a is None or b is None or a.mean is None or b.mean is None \
        else a.mean - b.mean
    both = a is not None and b is not None
    why = "" if value is not None else next(  # a side whose cell failed says why
        (e.reason for e in (a, b) if e is not None and e.reason in NOT_RUN.values()), "")
    return Entry("value", value=value, fmt=espec.get("fmt", "signed"),
                 digits=espec.get("digits", 1),
                 reads=(a.reads | b.reads) if both else frozenset(),
                 sides=(a, b) if value is not None else (), reason=why,
                 degenerate=sides_degenerate((a, b)) if value is not None else "")


def _wins(espec: Mapping, at: _At) -> Entry:
    """Rows of this table whose named entry beats the row's ``against`` entry, among the
    pairs that are evidence (a pair with a side predicting one class or at chance is no
    comparison: :func:`dfil.render.voiding.sides_degenerate`)."""
    pairs = [(at.table.entry(r, c), at.table.entry(r, espec["against"]))
             for r, c in espec["wins"]]
    pairs = [(a.mean, b.mean) for a, b in pairs
             if a and b and a.mean is not None and b.mean is not None
             and not sides_degenerate((a, b))]
    k = sum(a > b for a, b in pairs)
    value = {"k": k, "n": len(pairs),
             "p": stats.binomial(k, len(pairs)).pvalue if pairs else None}
    return Entry("value", value=value[espec["show"]],
                 fmt="int" if espec["show"] != "p" else "p")


def _sides(espec: Mapping, a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The two samples a test compares: for a paired test, the seeds both hold."""
    if espec["test"] in PAIRED:
        common = a.index.intersection(b.index)
        a, b = a[common], b[common]
    return a.to_numpy(dtype=float), b.to_numpy(dtype=float)


def _constant(x: np.ndarray) -> bool:
    """Every value the same, up to floating-point rounding (a scaled metric's sums)."""
    return bool(np.allclose(x, x[0], rtol=1e-9, atol=1e-12))


def untestable(espec: Mapping, a: pd.Series, b: pd.Series) -> str:
    """Why the test ``espec`` has no number on samples ``a`` and ``b`` ("" when it has
    one): fewer than 2 values a side; identical samples; for a paired t test or d_z,
    per-seed differences that are all the same nonzero value (their std is 0: t and d_z
    are infinite, so p would print as 0 although no spread was measured); for Welch's
    test, two constant samples that differ (the same)."""
    x, y = _sides(espec, a, b)
    if min(len(x), len(y)) < 2:
        return "a test needs two seeds a side"
    kind = espec["test"]
    if np.array_equal(x, y) if kind in PAIRED else np.ptp(np.r_[x, y]) == 0:
        return "identical samples: no test"
    d = x - y if kind in PAIRED else None
    if kind in ("paired_t", "dz") and _constant(d):
        what = "no d_z" if kind == "dz" else "no p"
        return (f"the paired differences are constant ({d[0]:+.4g} on each of {len(d)} "
                f"seeds, no spread): {what}")
    if kind == "welch" and _constant(x) and _constant(y):
        return (f"each side is constant ({x[0]:.4g} on {len(x)} seeds, {y[0]:.4g} on "
                f"{len(y)}; no spread): no p")
    return ""


def _test_value(espec: Mapping, a: pd.Series, b: pd.Series) -> float | None:
    """The test's number; ``None`` where the samples allow none (:func:`untestable`
    says why)."""
    if untestable(espec, a, b):
        return None
    x, y = _sides(espec, a, b)
    index = pd.RangeIndex(len(x))
    return float(TESTS[espec["test"]](pd.Series(x, index=index), pd.Series(y, index=index),
                                      espec))
