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

import math

from dfil import pages
from dfil.claims import VERDICTS, verdict_counts
from dfil.render.compare import RULE
from dfil.render.stale import MD_CLOSE, MD_OPEN

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
    lines = [f"# Paper diff: {header}", MD_OPEN + MD_CLOSE.rstrip("\n"), "",
             _spread_line(rows), "",
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


def _css(verdict: str) -> str:
    return verdict.replace(" ", "-").replace("/", "")


def html_context(rows: list[dict], header: str, claims: list[dict] | None = None) -> dict:
    """What ``diff.html.j2`` renders: the same content as :func:`markdown`, as data (rows
    of cells, each with its verdict's css class)."""
    cells = []
    for r in rows:
        paper = _num(r["paper"]) + (f" ± {_num(r['paper_std'])}" if r["paper_std"] else "")
        cells.append({"css": _css(r["verdict"]), "cells": [
            r["table"], r["row"], r["column"], paper, _num(r["reproduced"]), _num(r["std"]),
            str(r["n"]), _num(r["diff"]), r["verdict"]]})
    claim_rows = [{"css": _css(c["verdict"]), "cells": _claim_cells(c)} for c in claims or []]
    return {"header": header, "spread": _spread_line(rows), "audit_note": AUDIT_NOTE,
            "notes": _notes(rows), "claims_line": claims_line(claims) if claims else "",
            "verdicts": VERDICTS, "claim_heads": _CLAIM_HEADS, "claims": claim_rows,
            "number_heads": ["table", "row", "column", "paper", "reproduced", "std", "n",
                             "diff", "verdict"], "numbers": cells}


def html_report(rows: list[dict], header: str, claims: list[dict] | None = None,
                pdf: bool = True, standin_banner: tuple[str, str] | None = None) -> str:
    """``diff.html``: :func:`html_context` through the site's ``diff.html.j2`` (its
    navigation links ``tables.pdf``, else ``tables.tex`` where ``pdf`` is false; on a
    stand-in grid it carries ``standin_banner``, as every page of the report does)."""
    return pages.environment().get_template("diff.html.j2").render(
        title=f"Paper diff: {header}", root="", pdf=pdf, standin_banner=standin_banner,
        **html_context(rows, header, claims))
