"""The audit rendered: ``audit.md`` and ``audit.html`` through one Jinja template each
(shipped in ``dfil/audit/templates``; ``audit.html`` on the site's page, :mod:`dfil.pages`),
with every string from the checks file escaped for its format (pure but for reading the
templates)."""

from __future__ import annotations

import re
from importlib import resources

import jinja2
from markupsafe import Markup

from dfil import pages
from dfil.audit.checks import Outcome, findings, severity_counts, summary

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


def md_escape(value) -> str:
    """Markdown-safe text for a table cell or a list item: the characters that markdown
    or a table would read (``\\ ` * _ [ ] < > | #``) backslash-escaped, line breaks
    folded into spaces."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(value).split()))


class Md(str):
    """Markdown written in this package's templates or code, printed as is."""


def _md_finalize(value):
    if isinstance(value, (Md, int, float)) or value is None:
        return "" if value is None else value
    return md_escape(value)


def _loader() -> jinja2.BaseLoader:
    return jinja2.FileSystemLoader(str(resources.files("dfil.audit") / "templates"))


def md_environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=_loader(), undefined=jinja2.StrictUndefined,
                             finalize=_md_finalize, autoescape=False, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["raw"] = Md
    return env


def html_environment() -> jinja2.Environment:
    """The site's environment (:mod:`dfil.pages`), with this package's templates."""
    return pages.environment("dfil.audit")


def _context(outcomes: list[Outcome], title: str, source: str, checks_file: str) -> dict:
    flagged = findings(outcomes)
    kinds: dict[str, dict[str, int]] = {}
    for o in outcomes:
        row = kinds.setdefault(o.kind, {"total": 0, "consistent": 0, "conditional": 0,
                                        "inconsistent": 0, "not-recomputable": 0})
        row["total"] += 1
        row[o.verdict_class] += 1
    return {"outcomes": outcomes, "flagged": flagged, "counts": summary(outcomes),
            "levels": severity_counts(outcomes), "rule": SEVERITY_RULE,
            "kinds": kinds, "title": title, "source": source, "checks_file": checks_file,
            "mark": {True: "yes", False: "no", None: "n/a"}}


#: The severity rule in words (:mod:`dfil.audit.severity`), on both pages.
SEVERITY_RULE = (
    "A finding is an inconsistent check or one consistent only under a reading the paper "
    "does not rule out. Its severity follows from what its printed value carries "
    "(declared per check): critical when the value is a headline claim's direction or "
    "significance, the check is inconsistent and the recomputed value turns the claim "
    "around (the other side of p = 0.05, or of 0); major for any other inconsistent "
    "headline value or result number, and for a headline claim that holds only under an "
    "alternative reading while the primary one turns it around; minor for rounding, sd "
    "conventions, labels, bold marks, worked examples and wording, and for every other "
    "value that holds under an alternative reading.")


def markdown(outcomes: list[Outcome], title: str, source: str, checks_file: str) -> str:
    """``audit.md``: the summary, the findings ranked by severity with counts per level,
    the table of all checks, and each check's readings (with the sentence of the paper
    each contradicts, if any) under a heading named by its id (the link target
    ``audit.md#id``)."""
    return md_environment().get_template("audit.md.j2").render(
        **_context(outcomes, title, source, checks_file))


def html(outcomes: list[Outcome], title: str, source: str, checks_file: str) -> str:
    """``audit.html``: the same, on the site's page (its navigation and stale slot;
    ``tables.tex`` linked, which every report has), rows coloured by verdict, each row's
    id an anchor (``audit.html#id``)."""
    return html_environment().get_template("audit.html.j2").render(
        **_context(outcomes, title, source, checks_file), css=Markup(_CSS), root="")


_CSS = """table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}
tr.inconsistent td{background:#fdd}tr.conditional td{background:#ffd}
tr.consistent td{background:#efe}tr.not-recomputable td{color:#666}
span.critical{color:#a00;font-weight:bold}span.major{color:#a50}span.minor{color:#555}
td.id{white-space:nowrap;font-family:monospace}"""
