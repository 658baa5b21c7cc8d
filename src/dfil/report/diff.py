"""The paper-diff report: every reproduced number beside the one the paper printed, after
the claims and their verdicts (pure).

For each table entry that ``config/tables.yaml`` gives a ``paper:`` value, one row: the
published number (and its std where printed), the reproduced mean, std and n, their
difference, and its verdict (:mod:`dfil.report.numbers`: a claim's own number carries the
claim's verdict, any other the comparison rule's, :mod:`dfil.render.compare`). Before
that table, the claims (``claims.csv``'s rows, :func:`dfil.claims.judge`) with their
verdicts and counts, the same as the index's.
"""

from __future__ import annotations

import html
import math

from dfil.claims import VERDICTS, verdict_counts
from dfil.render.compare import RULE

COLUMNS = ["table", "row", "column", "paper", "paper_std", "reproduced", "std", "n", "diff",
           "verdict", "computed_on"]

# The paper audited against itself (DAG target paper_audit) sits beside the diff report.
AUDIT_NOTE = ("The paper's own arithmetic (its p-values, Δs, means and counts recomputed "
              "from its printed inputs) is audited in")


def diff_rows(numbers: list[dict], names: dict[str, str],
              notes: dict[str, str] | None = None) -> list[dict]:
    """One dict per published number (keys: :data:`COLUMNS`) of ``numbers``
    (:mod:`dfil.report.numbers`' rows); ``names``: each table's name by its number
    (``T5``); ``notes`` says per table name what it was computed on when that is not the
    paper's own cells."""
    notes = notes or {}
    out = []
    for r in numbers:
        if r["paper"] is None:
            continue
        name = names[r["table"]]
        out.append({"table": f"{r['table']} {name}", "row": r["row"],
                    "column": r["column"], "paper": r["paper"],
                    "paper_std": r["paper_std"], "reproduced": r["value"], "std": r["std"],
                    "n": r["n"], "diff": None if r["value"] is None else r["value"] - r["paper"],
                    "verdict": r["verdict"], "computed_on": notes.get(name, "")})
    return out


def _num(x, digits=3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}g}" if abs(x) >= 1000 else f"{x:.{digits}f}".rstrip("0").rstrip(".")


def _count_words(rows: list[dict]) -> str:
    return ", ".join(f"{v} {n}" for v, n in verdict_counts(rows).items())


def claims_line(claims: list[dict]) -> str:
    """The one-line count of the claims' verdicts (the index's)."""
    return f"Verdicts on the paper's {len(claims)} distinct claims: {_count_words(claims)}."


def _spread_line(rows: list[dict]) -> str:
    """The one-line summary of every published number's verdict, then the rule."""
    return f"{len(rows)} published numbers: {_count_words(rows)}. {RULE}"


def _notes(rows: list[dict]) -> dict[str, str]:
    return {r["table"]: r["computed_on"] for r in rows if r["computed_on"]}


def _notes_md(rows: list[dict]) -> list[str]:
    notes = _notes(rows)
    return [f"- {t}: {n}" for t, n in notes.items()] + ([""] if notes else [])


def _claim_cells(c: dict) -> list[str]:
    ci = "" if c["ci_low"] is None else f"[{_num(c['ci_low'])}, {_num(c['ci_high'])}]"
    return [c["claim"], c["label"], _num(c["paper"]), _num(c["estimate"]), ci,
            "" if c["p_holm"] is None else f"{c['p_holm']:.3g}", c["family"], c["verdict"],
            c["reason"]]


_CLAIM_HEADS = ["claim", "words", "paper", "reproduced", "95% interval", "p_holm", "family",
                "verdict", "reason"]


def _claims_md(claims: list[dict]) -> list[str]:
    """The claims section of ``diff.md``: counts, then one row per claim."""
    lines = ["## The paper's claims", "", claims_line(claims), "",
             *(f"- {v}: {doc}" for v, doc in VERDICTS.items()), "",
             "| " + " | ".join(_CLAIM_HEADS) + " |", "|" + "---|" * len(_CLAIM_HEADS)]
    lines += ["| " + " | ".join(x.replace("|", "/") for x in _claim_cells(c)) + " |"
              for c in claims]
    return lines + ["", "## Every published number", ""]


def markdown(rows: list[dict], header: str, claims: list[dict] | None = None) -> str:
    """``diff.md``: summary lines, the claims and their verdicts, then one table of every
    published entry."""
    lines = [f"# Paper diff: {header}", "", _spread_line(rows), "",
             f"{AUDIT_NOTE} [audit.md](audit.md) ([audit.html](audit.html)).", "",
             *_notes_md(rows),
             *(_claims_md(claims) if claims else []),
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


def _claims_html(claims: list[dict]) -> str:
    """The claims section of ``diff.html``, each row coloured by its verdict."""
    each = _html_table(_CLAIM_HEADS, [(_css(c["verdict"]), _claim_cells(c)) for c in claims])
    rules = "".join(f"<li><b>{html.escape(v)}</b>: {html.escape(doc)}</li>"
                    for v, doc in VERDICTS.items())
    return (f"<h2>The paper's claims</h2>\n<p>{html.escape(claims_line(claims))}</p>\n"
            f"<ul>{rules}</ul>\n{each}\n<h2>Every published number</h2>\n")


def html_report(rows: list[dict], header: str, claims: list[dict] | None = None) -> str:
    """``diff.html``: the same content as :func:`markdown`, self-contained, with rows
    marked by verdict."""
    cells = []
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        cells.append((_css(r["verdict"]),
                      [r["table"], r["row"], r["column"], paper, _num(r["reproduced"]),
                       _num(r["std"]), str(r["n"]), _num(r["diff"]), r["verdict"]]))
    numbers = _html_table(["table", "row", "column", "paper", "reproduced", "std", "n",
                           "diff", "verdict"], cells)
    effects = _claims_html(claims) if claims else ""
    notes = "".join(f"<li>{html.escape(t)}: {html.escape(n)}</li>"
                    for t, n in _notes(rows).items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Paper diff: {html.escape(header)}</title>
<style>body{{font-family:sans-serif}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px}} tr.contradicted td{{background:#fdd}}
tr.reproduced td{{background:#dfd}} tr.inconclusive td{{background:#fff6d0}}
tr.not-comparable td{{background:#eef}} tr.not-run td{{color:#888}}</style></head><body>
<h1>Paper diff: {html.escape(header)}</h1>
<p>{html.escape(_spread_line(rows))}</p>
<p><a href="index.html">The reproduction report</a>: claims and verdicts, every table side
by side; <a href="claims.csv">claims.csv</a>: one row per claim.
{html.escape(AUDIT_NOTE)} <a href="audit.html">audit.html</a>.</p>
<ul>{notes}</ul>
{effects}{numbers}</body></html>
"""
