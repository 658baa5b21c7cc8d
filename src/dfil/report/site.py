"""The report's pages: ``index.html`` (the claims and their verdicts, made from the rows of
``claims.csv`` into one static table that holds every claim with no script and fits the
page's width, the rule, links to everything), ``tables.html`` (every table as paper |
reproduced, sortable and filterable through itables, embedded for offline use), one page
per run under ``runs/``, ``numbers.csv``, ``claims.csv`` and the paper diff
(``diff.md``, ``diff.html``). Everything opens from the file system: no server, no
network."""

from __future__ import annotations

import functools
import html
import textwrap
from pathlib import Path

import jinja2
import pandas as pd

from dfil import claims as claims_mod
from dfil import pages
from dfil.render import compare, text
from dfil.render.entries import Table
from dfil.render.latex import STANDIN_BANNER, substitution_note
from dfil.render.names import labels
from dfil.report import diff, feeds, flags, numbers, runs
from dfil.util.atomic import atomic_path, atomic_write_text

#: Verdict colours, shared by the legend and every table (one per verdict word).
COLOURS = {"reproduced": "#c8ecc8", "by construction": "#e3f1d4", "contradicted": "#f8c9c9",
           "inconclusive": "#fff1b8", "not comparable": "#dde6f5", "not run": "#e4e4e4"}


def itables_init() -> str:
    """itables' offline loader (the DataTables bundle inlined), once per page."""
    import itables
    from itables.javascript import generate_init_offline_itables_html

    return generate_init_offline_itables_html(
        Path(itables.__file__).parent / "html" / "dt_bundle.js")


def itables_names() -> dict[str, str]:
    """The window property :func:`itables_init`'s loader sets to the promise of the
    DataTables bundle (``itables_version``) and the event it fires once loaded
    (``itables_ready``): a page's own script waits on them to enhance a static table."""
    from itables.javascript import _itables_ready_event, _itables_underscore_version

    return {"itables_version": _itables_underscore_version(),
            "itables_ready": _itables_ready_event()}


def datatable(frame: pd.DataFrame, table_id: str, paging: bool = True) -> str:
    """``frame`` as an interactive table (HTML cells are the report's own markup), every
    row in the page (``maxBytes=0``: itables never downsamples a large table); without
    ``paging`` every row is drawn, so each cell's anchor is on the page."""
    from itables import to_html_datatable

    pages_opt = {"pageLength": 25} if paging else {"paging": False}
    return to_html_datatable(frame, table_id=table_id, connected=False, allow_html=True,
                             showIndex=False, classes="display compact", maxBytes=0,
                             **pages_opt)


@functools.cache
def _cells():
    """The macros of ``_cells.html.j2``: the markup inside the interactive tables' cells."""
    return pages.environment().get_template("_cells.html.j2").module


def _badge(verdict: str) -> str:
    return str(_cells().badge(verdict, COLOURS.get(verdict, "#fff")))


#: The longest caption the index's list of tables prints whole (characters).
CAPTION_CHARS = 140


def short_caption(caption: str, width: int = CAPTION_CHARS) -> str:
    """``caption`` for the index's list of tables: whole when it fits in ``width``
    characters, else cut at the last word boundary that leaves room for " …" (never
    inside a word)."""
    return textwrap.shorten(caption, width=width, placeholder=" …")


def standin_banner(standin: str) -> tuple[str, str] | None:
    """The banner every page of a stand-in grid's report carries (``standin``: the grid's
    ``render.standin`` text; None for the paper's grid): its bold head and its words, the
    same as on each page of ``tables.pdf`` (:data:`dfil.render.latex.STANDIN_BANNER`)."""
    standin = str(standin).strip().rstrip(".")
    if not standin:
        return None
    head, tail = STANDIN_BANNER
    return head, f"{standin}. {tail}"


def _fmt(x, digits: int = 2) -> str:
    return "" if x is None or pd.isna(x) else f"{x:.{digits}f}"


def _run_links(keys: str) -> str:
    """Each run linked to its page, named by its key past the task and backbone (the
    "Ran as" column names those)."""
    return str(_cells().run_links([(runs.page_name(k), k, "/".join(k.split("/")[2:]) or k)
                                   for k in keys.split()]))


def _input(found: dict) -> str:
    """A model or data input as ``repo@commit`` (12 digits), else its id or path."""
    if "repo" in found:
        return f"{found['repo']}@{str(found.get('commit', '?'))[:12]}"
    return str(found.get("id") or found.get("path") or "?")


def provenance_text(config_hash: str, provenance: dict) -> str:
    """One run's provenance as the hover shows it: config hash, code commit, the model
    and data it read (repo and commit where pinned)."""
    inputs = provenance.get("inputs") or {}
    parts = [f"config {config_hash}", f"commit {str(provenance.get('git_commit', '?'))[:12]}"]
    if inputs.get("model"):
        parts.append(f"model {_input(inputs['model'])}")
    parts += [f"{name} {_input(v)}" for name, v in (inputs.get("data") or {}).items()]
    return "; ".join(parts)


def numbers_frame(rows: list[dict], provenance: dict[str, str]) -> pd.DataFrame:
    """The interactive view of number rows: paper beside reproduced, the reproduced
    value's provenance on hover, its runs linked."""
    out = []
    for r in rows:
        paper = _fmt(r["paper"]) + (f" ± {_fmt(r['paper_std'])}" if r["paper_std"] else "")
        why = r["basis"].removeprefix("not run: ") or "no run"
        rep = (_fmt(r["value"]) + (f" ± {_fmt(r['std'])}" if r["std"] is not None else "")
               if r["value"] is not None else f"not run ({why})")
        found = dict.fromkeys(provenance.get(k, "") for k in r["runs"].split())
        tip = (f"runs: {r['runs'] or '-'}; seeds: {r['seeds'] or '-'}; "
               + " | ".join(p for p in found if p))
        anchor = feeds.cell_anchor(r["table"], r["row_id"], r["column_id"])
        out.append({"Row (paper's label)": html.escape(r["row"]),
                    "Ran as": html.escape(r["ran_as"]),
                    "Column": html.escape(r["column"]), "Paper": paper,
                    "Reproduced": str(_cells().reproduced(anchor, tip, rep)),
                    "n": r["n"],
                    "Verdict": _badge(r["verdict"]), "Judged by": html.escape(r["basis"]),
                    "Runs": _run_links(r["runs"])})
    return pd.DataFrame(out)


def _places(places: str) -> str:
    """Where the paper prints a claim (claims.csv's ``places``: "; " between places, each
    opening with its table): the tables, the places themselves folded beneath them."""
    items = [p for p in places.split("; ") if p]
    tables = list(dict.fromkeys(p.split(":", 1)[0] for p in items))
    return str(_cells().places(", ".join(tables), items)) if items else ""


def _power_cells(c: dict, planned_grid: bool) -> dict[str, str]:
    """A claim's power at the seeds that ran (or why it has none) and, on a grid a plan
    wrote, whether the plan took it."""
    power = c.get("power_at_n")
    n = "" if c["n_a"] is None else min(c["n_a"], c["n_b"] or c["n_a"])
    out = {"Power at n": html.escape(c.get("power_why", "")) if power is None
           else f"{power:.2f} (n={n})"}
    return {**out, "Planned": html.escape(c.get("planned", ""))} if planned_grid else out


def _p_cell(p: float | None, p_holm: float | None) -> str:
    """A claim's raw p with its Holm-adjusted p (made from it) in brackets; a claim with a
    p outside every Holm pass (one not comparable) shows its p alone."""
    if p is None:
        return ""
    return f"{p:.3g}" + ("" if p_holm is None else f" ({p_holm:.3g})")


def claims_frame(rows: list[dict], planned_grid: bool = False) -> pd.DataFrame:
    """The index's view of ``claims.csv``'s rows, one per claim, in the same order; on a
    grid a plan wrote (``planned_grid``) with whether the plan took each."""
    out = []
    for c in rows:
        ci = "" if c["ci_low"] is None else f"[{c['ci_low']:.2f}, {c['ci_high']:.2f}]"
        table = c["claim"].split(":")[0]
        n = f"{c['n_a']}" + ("" if c["n_b"] is None else f" vs {c['n_b']}")
        out.append({"Claim": str(_cells().claim_link(table, c["claim"])),
                    "The paper's words": html.escape(c["label"]),
                    "Paper Δ": _fmt(c["paper"]), REPRODUCED: _fmt(c["estimate"]),
                    "95% interval": ci, "Verdict": _badge(c["verdict"]),
                    "Why": html.escape(c["reason"]),
                    "Test": html.escape(c["test"]) + ("" if c["n_a"] is None else f"; n {n}"),
                    "p (Holm)": _p_cell(c["p"], c["p_holm"]),
                    "MDE": _fmt(c["mde"]), **_power_cells(c, planned_grid),
                    "Family": c["family"], "Printed at": _places(c["places"]),
                    "Positive control": html.escape(c.get("control", ""))})
    return pd.DataFrame(out)


#: The reproduced effect's head, with a soft hyphen where it may break ("Repro-duced").
REPRODUCED = "Repro\u00adduced Δ"

#: The claims table's columns in order, each with its share of the page's width: the
#: claim, the paper's and the reproduced effect, the verdict and why first; the test's
#: details after them (its n beside the test, the Holm-adjusted p beside the raw one).
#: The table is laid out to the page's width, every cell wrapping, so the verdict and why
#: stand without horizontal scrolling at a 1280 px window; each share is wide enough for
#: its head's longest word at that window (heads wrap only between words or at a soft
#: hyphen), and the verdict's and family's for their words.
CLAIM_WIDTHS = {"Claim": 8, "The paper's words": 11, "Paper Δ": 7, REPRODUCED: 8,
                "95% interval": 8, "Verdict": 11, "Why": 15, "Test": 9, "p (Holm)": 8,
                "MDE": 6, "Power at n": 7, "Planned": 8, "Family": 8, "Printed at": 8,
                "Positive control": 9}


def claims_table(frame: pd.DataFrame, table_id: str = "claims") -> str:
    """The claims of ``frame`` (:func:`claims_frame`; its cells are the report's own
    escaped markup) as one static HTML table holding every row: complete without
    JavaScript, each column its share of the width (:data:`CLAIM_WIDTHS`)."""
    heads = list(frame.columns)
    total = sum(CLAIM_WIDTHS[h] for h in heads)
    widths = [f"{100 * CLAIM_WIDTHS[h] / total:.1f}%" for h in heads]
    rows = [[str(x) for x in r] for r in frame.itertuples(index=False)]
    return str(_cells().claims_table(table_id, list(zip(heads, widths, strict=True)), rows))


def _csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    frame = pd.DataFrame(rows, columns=columns)
    for col in ("n_a", "n_b"):  # counts, blank where none: never printed as 1.0
        if col in frame:
            frame[col] = frame[col].astype("Int64")
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def _claim_rows(tables: list[Table], named: dict, context: dict) -> list[dict]:
    """``claims.csv``'s rows: each distinct claim judged once, with its power at the seeds
    that ran and, on a grid a plan wrote, whether the plan took it (the context's power
    and plan)."""
    standin = bool(context.get("standin", ""))
    rows = claims_mod.judge(tables, standin, {n: x.name for n, x in named.items()})
    rows = claims_mod.with_controls(rows, context.get("controls", []), standin)
    return claims_mod.with_power(rows, context.get("power"), bool(context.get("plan")))


def _run_pages(env: jinja2.Environment, made: dict, context: dict,
               out_dir: Path) -> dict[str, Path]:
    """One page per run under ``runs/``."""
    out = {}
    for p in made.values():
        out[f"runs/{p.page}"] = out_dir / "runs" / p.page
        shown = {k: v for k, v in p.provenance.items() if k != "inputs"}
        if isinstance(shown.get("training"), dict):  # its inputs are the run's, shown once
            shown["training"] = {k: v for k, v in shown["training"].items() if k != "inputs"}
        atomic_write_text(out[f"runs/{p.page}"], env.get_template("run.html.j2").render(
            run=p, provenance=runs.flat(shown), inputs=runs.inputs_rows(p.provenance),
            test=p.test, title=context["title"], root="../",
            pdf=context.get("pdf", True),
            standin_banner=standin_banner(context.get("standin", ""))))
    return out


def write_pages(tables: list[Table], heads: dict[str, list[str]], context: dict,
                runs_dir: Path, out_dir: Path) -> dict[str, Path]:
    """Every page of the report in ``out_dir``. ``heads``: each table's template column
    heads by table name; ``context``: grid name, stand-in text, commit, figures (file ->
    caption), failures (run key -> reason), pdf (else the pages link tables.tex), power
    (each claim's :class:`dfil.plan.achieved.Achieved` by id, may be absent) and plan (the
    coverage line of the plan that wrote the grid; "" or absent: none did)."""
    out_dir = Path(out_dir)
    refs = {t.label: t.number for t in tables}
    standin = context.get("standin", "")
    named = {t.name: labels(t, heads.get(t.name, []), refs) for t in tables}
    found = _claim_rows(tables, named, context)
    of_number = claims_mod.numbers_claims(tables, found)
    per_table, all_rows = [], []
    across = flags.cross_table(tables)
    for t in tables:
        names = named[t.name]
        rows = numbers.table_numbers(t, names, standin, of_number)
        all_rows += rows
        notes = [substitution_note(t, standin), *t.notes, *t.footnotes]
        title = text.plain(t.caption, refs)
        per_table.append({"id": f"T{t.number}", "title": title, "short": short_caption(title),
                          "notes": [n for n in (text.plain(x, refs) for x in notes) if n],
                          "rows": rows, "names": names, "mixed": t.mixed,
                          "flags": flags.table_flags(t) + across.get(f"T{t.number}", [])})
    fed = feeds.run_feeds(tables, all_rows)
    made = {k: runs.run_page(runs_dir, k, fed.get(k)) for k in sorted(
        {k for r in all_rows for k in r["runs"].split()})}
    prov = {k: provenance_text(p.config_hash, p.provenance) for k, p in made.items()}
    env = pages.environment()
    out = _run_pages(env, made, context, out_dir)
    for t in per_table:
        t["html"] = (datatable(numbers_frame(t["rows"], prov), f"dt-{t['id']}", paging=False)
                     if t["rows"] else "")
    common = {"title": context["title"], "root": "", "colours": COLOURS, "rule": compare.RULE,
              "init": itables_init(), **itables_names(), "verdicts": claims_mod.VERDICTS,
              "families": claims_mod.FAMILIES, "pdf": context.get("pdf", True),
              "standin_banner": standin_banner(standin)}
    out["tables.html"] = out_dir / "tables.html"
    atomic_write_text(out["tables.html"], env.get_template("tables.html.j2").render(
        tables=per_table, explain=flags.EXPLAIN, **common))
    families = {f: {v: n for v, n in claims_mod.verdict_counts(
        [c for c in found if c["family"] == f]).items() if n} for f in claims_mod.FAMILIES}
    out["index.html"] = out_dir / "index.html"
    atomic_write_text(out["index.html"], env.get_template("index.html.j2").render(
        claims=claims_table(claims_frame(found, bool(context.get("plan")))) if found else "",
        counts=claims_mod.verdict_counts(found),
        number_counts=claims_mod.verdict_counts(all_rows), family_counts=families,
        n_claims=len(found), standin_sentence=claims_mod.STANDIN, tables=per_table,
        controls=context.get("controls", []), context=context, cut=runs.cut(made), **common))
    return out | _files(tables, all_rows, found, context, out_dir)


def _files(tables: list[Table], all_rows: list[dict], found: list[dict], context: dict,
           out_dir: Path) -> dict[str, Path]:
    """``numbers.csv``, ``claims.csv`` and the paper diff from the same rows."""
    out = {"numbers.csv": out_dir / "numbers.csv", "claims.csv": out_dir / "claims.csv"}
    _csv(out["numbers.csv"], all_rows, numbers.COLUMNS)
    _csv(out["claims.csv"], found, claims_mod.COLUMNS)
    standin = context.get("standin", "")
    header = f"config {context['grid']}" + (f" ({standin})" if standin else "")
    rows = diff.diff_rows(all_rows, {f"T{t.number}": t.name for t in tables},
                          {t.name: substitution_note(t, standin) for t in tables})
    out["diff.md"] = out_dir / "diff.md"
    atomic_write_text(out["diff.md"], diff.markdown(rows, header, found))
    out["diff.html"] = out_dir / "diff.html"
    atomic_write_text(out["diff.html"],
                      diff.html_report(rows, header, found, context.get("pdf", True),
                                       standin_banner(standin)))
    return out

