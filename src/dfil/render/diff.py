"""The paper-diff report: every reproduced number beside the one the paper printed (pure).

For each table cell that ``config/tables.yaml`` gives a ``paper:`` value, one row: the
published number (and its std where printed), the reproduced mean, std and n, their
difference, and whether the difference lies within the seeds' spread - ``|Δ| <=`` the
larger of the two sample stds (either side's spread counts; with one run and no printed
std there is no spread to judge by, and the verdict is "n/a").
"""

from __future__ import annotations

import html
import math

from dfil.render.entries import Table
from dfil.render.fmt import parse_published

COLUMNS = ["table", "row", "column", "paper", "paper_std", "reproduced", "std", "n", "diff",
           "within_spread", "computed_on"]

# The paper audited against itself (DAG target paper_audit) sits beside the diff report.
AUDIT_NOTE = ("The paper's own arithmetic (its p-values, Δs, means and counts recomputed "
              "from its printed inputs) is audited in")


def diff_rows(tables: list[Table], notes: dict[str, str] | None = None) -> list[dict]:
    """One dict per published cell of ``tables`` (keys: :data:`COLUMNS`); ``notes`` says
    per table what it was computed on when that is not the paper's own cells."""
    notes = notes or {}
    out = []
    for t in tables:
        for row in t.rows:
            for col, cell in row.cells.items():
                if cell.published is None:
                    continue
                pub, pub_sd = parse_published(cell.published)
                if pub is None:
                    continue
                mean, sd = cell.mean, cell.std
                if cell.fmt == "std":
                    mean, sd = cell.std, None
                diff = None if mean is None else mean - pub
                spread = max((s for s in (sd, pub_sd) if s is not None), default=None)
                within = ("not run" if mean is None else "n/a" if spread is None
                          else "yes" if abs(diff) <= spread + 1e-9 else "no")
                out.append({"table": f"T{t.number} {t.name}", "row": row.id, "column": col,
                            "paper": pub, "paper_std": pub_sd, "reproduced": mean, "std": sd,
                            "n": cell.n, "diff": diff, "within_spread": within,
                            "computed_on": notes.get(t.name, "")})
    return out


def _num(x, digits=3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}g}" if abs(x) >= 1000 else f"{x:.{digits}f}".rstrip("0").rstrip(".")


def _summary(rows: list[dict]) -> dict:
    counts = {k: 0 for k in ("yes", "no", "n/a", "not run")}
    for r in rows:
        counts[r["within_spread"]] += 1
    return counts


def _notes(rows: list[dict]) -> dict[str, str]:
    return {r["table"]: r["computed_on"] for r in rows if r["computed_on"]}


def _notes_md(rows: list[dict]) -> list[str]:
    notes = _notes(rows)
    return [f"- {t}: {n}" for t, n in notes.items()] + ([""] if notes else [])


def markdown(rows: list[dict], header: str) -> str:
    """``diff.md``: a summary line, then one table of every published cell."""
    c = _summary(rows)
    lines = [f"# Paper diff: {header}", "",
             f"{len(rows)} published numbers: {c['yes']} within the seeds' spread, "
             f"{c['no']} outside, {c['n/a']} without a spread to judge by, "
             f"{c['not run']} not run in this grid.", "",
             f"{AUDIT_NOTE} [audit.md](audit.md) ([audit.html](audit.html)).", "",
             *_notes_md(rows),
             "| table | row | column | paper | reproduced | std | n | diff | within spread |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        lines.append(f"| {r['table']} | {r['row']} | {r['column']} | {paper} | "
                     f"{_num(r['reproduced'])} | {_num(r['std'])} | {r['n']} | "
                     f"{_num(r['diff'])} | {r['within_spread']} |")
    return "\n".join(lines) + "\n"


def html_report(rows: list[dict], header: str) -> str:
    """``diff.html``: the same table, self-contained, with outside-spread rows marked."""
    c = _summary(rows)
    body = []
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        cells = [r["table"], r["row"], r["column"], paper, _num(r["reproduced"]),
                 _num(r["std"]), str(r["n"]), _num(r["diff"]), r["within_spread"]]
        cls = r["within_spread"].replace(" ", "-").replace("/", "")
        body.append(f'<tr class="{cls}">' + "".join(f"<td>{html.escape(x)}</td>"
                                                    for x in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("table", "row", "column", "paper", "reproduced",
                                             "std", "n", "diff", "within spread"))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Paper diff: {html.escape(header)}</title>
<style>body{{font-family:sans-serif}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px}} tr.no td{{background:#fdd}}
tr.yes td{{background:#dfd}} tr.not-run td{{color:#888}}</style></head><body>
<h1>Paper diff: {html.escape(header)}</h1>
<p>{len(rows)} published numbers: {c['yes']} within the seeds' spread, {c['no']} outside,
{c['n/a']} without a spread to judge by, {c['not run']} not run in this grid.</p>
<p>{html.escape(AUDIT_NOTE)} <a href="audit.html">audit.html</a>.</p>
<ul>{"".join(f"<li>{html.escape(t)}: {html.escape(n)}</li>" for t, n in _notes(rows).items())}</ul>
<table><thead><tr>{head}</tr></thead><tbody>
{chr(10).join(body)}
</tbody></table></body></html>
"""
