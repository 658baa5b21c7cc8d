"""The paper-diff report: every reproduced number beside the one the paper printed (pure).

For each table entry that ``config/tables.yaml`` gives a ``paper:`` value, one row: the
published number (and its std where printed), the reproduced mean, std and n, their
difference, and the verdict of the comparison rule (:mod:`dfil.render.compare`: the
paper's value inside the reproduced mean's 95% t-interval; "not comparable" on a stand-in
grid). Before that table, the directions of the paper's effects per table and one by one
(:mod:`dfil.render.direction`).
"""

from __future__ import annotations

import html
import math

from dfil.render.compare import NUMBER_VERDICTS, RULE, comparable, judge
from dfil.render.direction import TOL, direction_line, per_table
from dfil.render.entries import Table
from dfil.render.fmt import parse_published
from dfil.render.names import table_labels

COLUMNS = ["table", "row", "column", "paper", "paper_std", "reproduced", "std", "n", "diff",
           "verdict", "computed_on"]

# The paper audited against itself (DAG target paper_audit) sits beside the diff report.
AUDIT_NOTE = ("The paper's own arithmetic (its p-values, Δs, means and counts recomputed "
              "from its printed inputs) is audited in")


def diff_rows(tables: list[Table], notes: dict[str, str] | None = None,
              standin: str = "") -> list[dict]:
    """One dict per published entry of ``tables`` (keys: :data:`COLUMNS`); ``notes`` says
    per table what it was computed on when that is not the paper's own cells;
    ``standin``: what the grid runs in the paper's place ("" for the paper's grid)."""
    notes = notes or {}
    names = table_labels(tables)
    out = []
    for t in tables:
        named = names[t.name]
        for row in t.rows:
            for col, entry in row.entries.items():
                pub, pub_sd = parse_published(entry.published)
                if pub is None:
                    continue
                mean, sd, values = entry.compared
                verdict = judge(pub, entry.published, values, mean,
                                comparable(entry.fmt, standin)).verdict
                out.append({"table": f"T{t.number} {t.name}", "row": named.rows.get(row.id, row.id),
                            "column": named.columns.get(col, col),
                            "paper": pub, "paper_std": pub_sd, "reproduced": mean, "std": sd,
                            "n": entry.n, "diff": None if mean is None else mean - pub,
                            "verdict": verdict, "computed_on": notes.get(t.name, "")})
    return out


def _num(x, digits=3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}g}" if abs(x) >= 1000 else f"{x:.{digits}f}".rstrip("0").rstrip(".")


def _spread_line(rows: list[dict]) -> str:
    """The one-line summary of every published number's verdict, then the rule."""
    c = {v: sum(r["verdict"] == v for r in rows) for v in NUMBER_VERDICTS}
    return (f"{len(rows)} published numbers: {c['within']} within, {c['outside']} outside, "
            f"{c['not comparable']} not comparable on this grid, {c['not run']} not run. "
            f"{RULE}")


def _notes(rows: list[dict]) -> dict[str, str]:
    return {r["table"]: r["computed_on"] for r in rows if r["computed_on"]}


def _notes_md(rows: list[dict]) -> list[str]:
    notes = _notes(rows)
    return [f"- {t}: {n}" for t, n in notes.items()] + ([""] if notes else [])


def _direction_md(directions: list[dict]) -> list[str]:
    """The directions section of ``diff.md``: per table, then effect by effect."""
    lines = ["## Directions of the paper's effects", "", direction_line(directions),
             f"A difference below {TOL:g} (the table's units) counts as no effect (0).",
             "", "| table | effects in the paper's direction |", "|---|---|",
             *(f"| {t} | {text} |" for t, text in per_table(directions)), "",
             "| table | effect | paper | reproduced | direction (paper / reproduced) "
             "| same direction |", "|---|---|---|---|---|---|"]
    for r in directions:
        lines.append(f"| {r['table']} | {r['effect']} | {_num(r['paper'])} | "
                     f"{_num(r['reproduced'])} | {r['paper_dir'] or ''} / "
                     f"{r['reproduced_dir'] or ''} | {r['same_direction']} |")
    return lines + ["", "## Every published number", ""]


def markdown(rows: list[dict], header: str, directions: list[dict] | None = None) -> str:
    """``diff.md``: summary lines, the directions of the paper's effects per table and
    one by one, then one table of every published entry."""
    lines = [f"# Paper diff: {header}", "", _spread_line(rows), "",
             f"{AUDIT_NOTE} [audit.md](audit.md) ([audit.html](audit.html)).", "",
             *_notes_md(rows),
             *(_direction_md(directions) if directions else []),
             "| table | row | column | paper | reproduced | std | n | diff | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        lines.append(f"| {r['table']} | {r['row']} | {r['column']} | {paper} | "
                     f"{_num(r['reproduced'])} | {_num(r['std'])} | {r['n']} | "
                     f"{_num(r['diff'])} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def _html_table(headers: list[str], rows: list[tuple[str, list[str]]]) -> str:
    """A table whose rows are (css class, cells)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "\n".join(f'<tr class="{cls}">' + "".join(f"<td>{html.escape(x)}</td>"
                                                      for x in cells) + "</tr>"
                     for cls, cells in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table>"


def _css(verdict: str) -> str:
    return verdict.replace(" ", "-").replace("/", "")


def _direction_html(directions: list[dict]) -> str:
    """The directions section of ``diff.html``, rows against the paper's marked."""
    tables = _html_table(["table", "effects in the paper's direction"],
                         [("", [t, text]) for t, text in per_table(directions)])
    each = _html_table(
        ["table", "effect", "paper", "reproduced", "direction (paper / reproduced)",
         "same direction"],
        [(_css(r["same_direction"]),
          [r["table"], r["effect"], _num(r["paper"]), _num(r["reproduced"]),
           f"{r['paper_dir'] or ''} / {r['reproduced_dir'] or ''}", r["same_direction"]])
         for r in directions])
    return (f"<h2>Directions of the paper's effects</h2>\n"
            f"<p>{html.escape(direction_line(directions))} A difference below "
            f"{TOL:g} (the table's units) counts as no effect (0).</p>\n"
            f"{tables}\n<p></p>\n{each}\n<h2>Every published number</h2>\n")


def html_report(rows: list[dict], header: str, directions: list[dict] | None = None) -> str:
    """``diff.html``: the same content as :func:`markdown`, self-contained, with rows
    outside the spread or against the paper's direction marked."""
    cells = []
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        cells.append((_css(r["verdict"]),
                      [r["table"], r["row"], r["column"], paper, _num(r["reproduced"]),
                       _num(r["std"]), str(r["n"]), _num(r["diff"]), r["verdict"]]))
    numbers = _html_table(["table", "row", "column", "paper", "reproduced", "std", "n",
                           "diff", "verdict"], cells)
    effects = _direction_html(directions) if directions else ""
    notes = "".join(f"<li>{html.escape(t)}: {html.escape(n)}</li>"
                    for t, n in _notes(rows).items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Paper diff: {html.escape(header)}</title>
<style>body{{font-family:sans-serif}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px}} tr.no td,tr.outside td{{background:#fdd}}
tr.yes td,tr.within td{{background:#dfd}} tr.not-comparable td{{background:#eef}}
tr.not-run td{{color:#888}}</style></head><body>
<h1>Paper diff: {html.escape(header)}</h1>
<p>{html.escape(_spread_line(rows))}</p>
<p><a href="index.html">The reproduction report</a>: claims and verdicts, every table side
by side. {html.escape(AUDIT_NOTE)} <a href="audit.html">audit.html</a>.</p>
<ul>{notes}</ul>
{effects}{numbers}</body></html>
"""
