"""Resolved tables -> LaTeX through one Jinja template per table (pure but for reading
the templates shipped in the package).

The environment uses LaTeX-safe delimiters (``\\VAR{...}``, ``\\BLOCK{...}``,
``\\#{...}``) and ``StrictUndefined``, and escapes every string it prints unless it is
:class:`Tex` - LaTeX source written in this repository (``config/tables.yaml``, the
templates) or produced by :mod:`dfil.render.fmt`. Strings from data (backbone names,
notes, provenance, the grid's stand-in text) are plain ``str`` and so are escaped.
"""

from __future__ import annotations

from importlib import resources

import jinja2

from dfil.render.entries import Table
from dfil.render.fmt import escape


class Tex(str):
    """A string that is already LaTeX source."""


def _finalize(value):
    if isinstance(value, Tex) or isinstance(value, (int, float)):
        return value
    return escape(value)


def environment() -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(resources.files("dfil.render") / "templates"))
    env = jinja2.Environment(
        loader=loader, undefined=jinja2.StrictUndefined, finalize=_finalize,
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, autoescape=False)
    env.filters["tex"] = Tex
    return env


def substitution_note(table: Table, standin: str) -> str:
    """The caption's sentence saying what the table was computed on, when not the paper's
    own cells (plain text: escaped when printed)."""
    if not table.substituted and not standin:
        return ""
    parts = [f"{new} for {old}" for kind, old, new in sorted(table.substituted)]
    text = "Reproduced on " + (standin or "a different grid")
    return text + (" (" + "; ".join(parts) + ")." if parts else ".")


def render_table(env: jinja2.Environment, table: Table, provenance: dict,
                 standin: str = "") -> str:
    """The ``.tex`` of one resolved table (a ``table`` float), with its provenance."""
    template = env.get_template(f"{table.name}.tex.j2")
    rows = [{"kind": r.kind, "label": Tex(r.label),
             "entries": Tex(" & ".join(r.entries[c].render() for c in table.visible_columns)
                          if r.kind == "body" else "")}
            for r in table.rows if not r.hidden]
    return template.render(
        t=table, rows=rows, caption=Tex(table.caption), label=Tex(table.label),
        ncols=len(table.visible_columns) + 1, note=substitution_note(table, standin),
        notes=table.notes, footnotes=[Tex(f) for f in table.footnotes],
        provenance=provenance)


def render_document(env: jinja2.Environment, names: list[str], title: str) -> str:
    """A standalone document that inputs every rendered table (for ``tables.pdf``)."""
    return env.get_template("_document.tex.j2").render(names=names, title=title)
