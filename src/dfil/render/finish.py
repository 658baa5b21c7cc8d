"""A resolved table finished (pure): rows computed from other rows, the best entries
bold, rows without runs left out and said so, every dash explained, footnotes whose mark
nothing carries dropped, what its entries read collected."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from dfil.render.entries import (
    Entry,
    Row,
    Table,
    dash_note,
    has_data,
    row_ops,
    tidy_rows,
    used_footnotes,
)
from dfil.render.fmt import parse_published
from dfil.render.text import row_names


def union(entries, field: str) -> frozenset:
    """The union of ``field`` (reads, substituted) over ``entries``."""
    return frozenset().union(*(getattr(e, field) for e in entries))


def _bold(spec: Mapping, rows: list[Row]) -> None:
    """Bold the best mean of each group a ``bold`` rule names (in ``rows``, which
    :func:`dfil.render.entries.row_ops` built)."""
    for rule in spec.get("bold", []):
        among = rule["among"]
        groups = ([[(r, c) for c in among] for r in rows if r.kind == "body" and not r.baseline]
                  if rule["by"] == "row" else
                  [[(r, c) for r in rows if r.id in among] for c in rule["cols"]])
        for group in groups:
            means = [e.mean for r, c in group
                     if (e := r.entries.get(c)) is not None and e.mean is not None]
            if len(means) < 2:
                continue
            for r, c in group:
                e = r.entries.get(c)
                if e is not None and e.mean is not None and e.mean == max(means):
                    r.entries[c] = replace(e, bold=True)


def _dropped_notes(dropped: list[Row], names: Mapping[str, str]) -> list[str]:
    """Why rows with nothing to print are left out (named by ``names``): not run for a
    stated reason (a run another row shows, :mod:`dfil.render.reuse`), no run of the
    grid, or runs that lack the metric (not measured on this grid, or failed)."""
    why: dict[str, list[str]] = {}
    for r in dropped:
        reasons = {e.reason for e in r.entries.values() if e.reason.startswith("not run")}
        if len(reasons) == 1:
            why.setdefault(reasons.pop(), []).append(r.id)
    stated = {i for ids in why.values() for i in ids}
    no_runs = [r.id for r in dropped if r.id not in stated
               and not any(e.reads for e in r.entries.values())]
    no_metric = [r.id for r in dropped if r.id not in stated and r.id not in no_runs]

    def rows(ids: list[str]) -> str:
        return ", ".join(names.get(i, i) for i in ids)

    return ([f"Row{'s' * (len(ids) > 1)} {rows(ids)}: {reason}." for reason, ids in why.items()]
            + ([f"Rows with no runs in this grid: {rows(no_runs)}."] if no_runs else [])
            + ([f"Rows whose runs lack these metrics (not measured on this grid, or "
                f"failed): {rows(no_metric)}."] if no_metric else []))


def finish(spec: Mapping, table: Table, footnotes: list[Entry],
           refs: Mapping[str, int] | None = None) -> Table:
    """``table`` with its row operations applied, the best entries bold, the published
    numbers collected, rows without runs dropped (named as text, ``\\ref`` labels as
    the table numbers ``refs`` gives), and what its entries read."""
    rows = row_ops(table)
    _bold(spec, rows)
    entries = [e for r in rows for e in r.entries.values()] + footnotes
    published = {(r.id, c): parse_published(e.published)[0] for r in rows
                 for c, e in r.entries.items() if e.published is not None}
    signed = [(r.id, c) for r in rows for c, e in r.entries.items()
              if e.fmt == "signed" and published.get((r.id, c)) is not None]
    kept = tidy_rows([r for r in rows if r.kind != "body" or has_data(r)])
    names = row_names(rows, dict(refs or {}))
    notes = _dropped_notes([r for r in rows if r.kind == "body" and not has_data(r)
                            and not r.hidden and not r.baseline], names)
    visible = [c for c in table.columns if c not in table.hidden]
    shown = " ".join([table.caption] + [r.label for r in kept if not r.hidden] + [
        e.render() for r in kept if not r.hidden for c in visible
        if (e := r.entries.get(c)) is not None])
    printed = used_footnotes([f.render() for f in footnotes], shown)
    dashes = dash_note(kept, visible, [f for f in footnotes  # the footnotes printed
                                       if any(text in f.render() for text in printed)])
    return replace(
        table, rows=kept, published=published, footnotes=printed,
        signed=signed, notes=notes + ([dashes] if dashes else []), row_names=names,
        reads=union(entries, "reads"), substituted=union(entries, "substituted"))
