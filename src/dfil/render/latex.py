"""Resolved tables -> LaTeX through one Jinja template per table (pure but for reading
the templates shipped in the package).

The environment uses LaTeX-safe delimiters (``\\VAR{...}``, ``\\BLOCK{...}``,
``\\#{...}``) and ``StrictUndefined``, and escapes every string it prints unless it is
:class:`Tex` - LaTeX source written in this repository (``config/tables.yaml``, the
templates) or produced by :mod:`dfil.render.fmt`. Strings from data (backbone names,
notes, provenance, the grid's stand-in text) are plain ``str`` and so are escaped.
"""

from __future__ import annotations

import re
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


def _substitution(kind: str, old: str, new: str) -> str:
    """One render-map substitution as a reader says it: ``λ=0.5 for λ=0.1``."""
    if kind == "lambdas":
        return f"λ={new} for λ={old}"
    if kind == "variants":
        return f"{'the base recipe' if new == '(none)' else new} for {old}"
    return f"{new} for {old}"


def substitution_note(table: Table, standin: str) -> str:
    """The caption's short note naming what this table's numbers ran as on a stand-in
    grid: each substitution and the seeds actually run (plain text: escaped when
    printed); "" for the paper's own grid and for a table with no experiments (the
    grid's full stand-in description is said once, in the document's title)."""
    if not table.reads or (not table.substituted and not standin):
        return ""
    seeds = sorted({int(k.rsplit("/seed", 1)[1]) for k, _ in table.reads
                    if k.rsplit("/seed", 1)[-1].isdigit()})
    parts = [_substitution(*s) for s in sorted(table.substituted) if s[0] != "seed_sets"]
    ran = (f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} "
           f"({', '.join(map(str, seeds))})" if seeds else "")
    paper = sorted({int(n) for n in re.findall(r"(\d+) seeds", table.caption)} - {len(seeds)})
    if ran and paper:
        ran += f" where the caption gives the paper's {' or '.join(map(str, paper))}"
    return "Ran as: " + "; ".join(p for p in [*parts, ran] if p) + "."


#: The mark of an entry resting on degenerate runs (:func:`degenerate_footnote`).
DEGENERATE_MARK = r"$^{\odot}$"
#: What the footnote of marked entries opens with: which findings void a claim
#: (:func:`dfil.render.voiding.sides_degenerate`).
HEADING = (" Degenerate evidence (one class or at chance: never counted for a claim; "
           "identical predictions or zero variance: a claim is judged on its per-seed "
           "differences): ")


def _shown(entry) -> str:
    """An entry as printed, marked when its runs are degenerate evidence."""
    return entry.render() + (DEGENERATE_MARK if entry.degenerate else "")


def degenerate_footnote(table: Table) -> str:
    """The footnote (LaTeX) naming each marked entry of the visible rows and why its runs
    are degenerate evidence (plain reasons, escaped); "" when no entry is marked."""
    found: dict[str, list[str]] = {}  # reason -> the entries it marks
    for r in table.rows:
        if r.kind != "body" or r.hidden:
            continue
        for c in table.visible_columns:
            if (e := r.entries.get(c)) is not None and e.degenerate:
                found.setdefault(e.degenerate, []).append(f"{table.row_names.get(r.id, r.id)}"
                                                          f" / {c}")
    if not found:
        return ""
    return (DEGENERATE_MARK + HEADING
            + escape("; ".join(f"{', '.join(at)}: {why}" for why, at in found.items())) + ".")


def render_table(env: jinja2.Environment, table: Table, provenance: dict,
                 standin: str = "") -> str:
    """The ``.tex`` of one resolved table (a ``table`` float), with its provenance; an
    entry resting on degenerate runs is marked and named in a footnote."""
    template = env.get_template(f"{table.name}.tex.j2")
    rows = [{"kind": r.kind, "label": Tex(r.label),
             "entries": Tex(" & ".join(_shown(r.entries[c]) for c in table.visible_columns)
                          if r.kind == "body" else "")}
            for r in table.rows if not r.hidden]
    marked = degenerate_footnote(table)
    return template.render(
        t=table, rows=rows, caption=Tex(table.caption), label=Tex(table.label),
        ncols=len(table.visible_columns) + 1, note=substitution_note(table, standin),
        notes=table.notes,
        footnotes=[Tex(f) for f in table.footnotes] + ([Tex(marked)] if marked else []),
        provenance=provenance)


#: The stand-in banner's words around the grid's stand-in text (every page of
#: ``tables.pdf`` and of the report on a stand-in grid).
STANDIN_BANNER = ("Stand-in grid:", "Not the paper's models or data: no number here is "
                  "the paper's setting.")


def render_document(env: jinja2.Environment, names: list[str], title: str,
                    standin: str = "") -> str:
    """A standalone document that inputs every rendered table (for ``tables.pdf``); on
    a stand-in grid (``standin``: the grid's ``render.standin`` text) every page carries
    the stand-in banner in its header (:data:`STANDIN_BANNER`, fancyhdr)."""
    head, tail = STANDIN_BANNER
    return env.get_template("_document.tex.j2").render(
        names=names, title=title, standin=str(standin).strip().rstrip("."),
        banner_head=head, banner_tail=tail)
