"""The report's pages: ``index.html`` (claims and their verdicts, the comparison rule,
links to everything), ``tables.html`` (every table as paper | reproduced, sortable and
filterable through itables, embedded for offline use), one page per run under ``runs/``
and ``numbers.csv``. Everything opens from the file system: no server, no network."""

from __future__ import annotations

import html
from importlib import resources
from pathlib import Path

import jinja2
import pandas as pd

from dfil.atomic import atomic_path
from dfil.render import compare, text
from dfil.render.entries import Table
from dfil.render.latex import substitution_note
from dfil.render.names import labels
from dfil.report import claims as claims_mod
from dfil.report import flags, numbers, runs

#: Verdict colours, shared by the legend and every table.
COLOURS = {"reproduced": "#c8ecc8", "within": "#c8ecc8", "direction only": "#fff1b8",
           "outside": "#f8c9c9", "not reproduced": "#f8c9c9", "not comparable": "#dde6f5",
           "no paper value": "#ffffff", "not run": "#e4e4e4"}


def _env() -> jinja2.Environment:
    loader = jinja2.FileSystemLoader(str(resources.files("dfil.report") / "templates"))
    return jinja2.Environment(loader=loader, autoescape=True,
                              undefined=jinja2.StrictUndefined)


def _write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(content, encoding="utf-8")


def itables_init() -> str:
    """itables' offline loader (the DataTables bundle inlined), once per page."""
    import itables
    from itables.javascript import generate_init_offline_itables_html

    return generate_init_offline_itables_html(
        Path(itables.__file__).parent / "html" / "dt_bundle.js")


def datatable(frame: pd.DataFrame, table_id: str) -> str:
    """``frame`` as an interactive table (HTML cells are the report's own markup)."""
    from itables import to_html_datatable

    return to_html_datatable(frame, table_id=table_id, connected=False, allow_html=True,
                             showIndex=False, pageLength=25, classes="display compact")


def _badge(verdict: str) -> str:
    return (f'<span class="v" style="background:{COLOURS.get(verdict, "#fff")}">'
            f"{html.escape(verdict)}</span>")


def _fmt(x, digits: int = 2) -> str:
    return "" if x is None or pd.isna(x) else f"{x:.{digits}f}"


def _run_links(keys: str) -> str:
    """Each run linked to its page, named by its key past the task and backbone (the
    "Ran as" column names those)."""
    return "<br>".join(f'<a href="runs/{runs.page_name(k)}" title="{html.escape(k)}">'
                       f'{html.escape("/".join(k.split("/")[2:]) or k)}</a>'
                       for k in keys.split())


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
        tip = html.escape(f"runs: {r['runs'] or '-'}; seeds: {r['seeds'] or '-'}; "
                          + " | ".join(p for p in found if p))
        out.append({"Row (paper's label)": html.escape(r["row"]),
                    "Ran as": html.escape(r["ran_as"]),
                    "Column": html.escape(r["column"]), "Paper": paper,
                    "Reproduced": f'<span title="{tip}">{rep}</span>', "n": r["n"],
                    "Verdict": _badge(r["verdict"]), "Judged by": html.escape(r["basis"]),
                    "Runs": _run_links(r["runs"])})
    return pd.DataFrame(out)


def claims_frame(found: list[claims_mod.Claim]) -> pd.DataFrame:
    rows = []
    for c in found:
        ci = "" if c.interval is None else f"[{c.interval[0]:.2f}, {c.interval[1]:.2f}]"
        rows.append({"Table": f'<a href="tables.html#{c.table}">{c.table}</a>',
                     "Claim": html.escape(c.label), "Paper Δ": _fmt(c.paper),
                     "Reproduced Δ": _fmt(c.reproduced), "95% interval": ci,
                     "Test on the seeds": html.escape(c.test),
                     "p": "" if c.pvalue is None else f"{c.pvalue:.3g}",
                     "Verdict": _badge(c.verdict), "Why": html.escape(c.reason)})
    return pd.DataFrame(rows)


def write_site(tables: list[Table], heads: dict[str, list[str]], context: dict,
               runs_dir: Path, out_dir: Path) -> dict[str, Path]:
    """Every page of the report in ``out_dir``. ``heads``: each table's template column
    heads by table name; ``context``: grid name, stand-in text, commit, figures
    (file -> caption), failures (run key -> reason), frozen (the run keys that train
    no adapter) and pdf (whether tables.pdf is built: else the pages link tables.tex)."""
    out_dir = Path(out_dir)
    refs = {t.label: t.number for t in tables}
    standin = context.get("standin", "")
    per_table, found, all_rows = [], [], []
    across = flags.cross_table(tables)
    for t in tables:
        names = labels(t, heads.get(t.name, []), refs)
        rows = numbers.table_numbers(t, names, standin)
        all_rows += rows
        found += claims_mod.table_claims(t, bool(standin), names.name,
                                         context.get("frozen", frozenset()))
        notes = [substitution_note(t, standin), *t.notes, *t.footnotes]
        per_table.append({"id": f"T{t.number}", "title": text.plain(t.caption, refs),
                          "notes": [n for n in (text.plain(x, refs) for x in notes) if n],
                          "rows": rows, "names": names,
                          "flags": flags.table_flags(t) + across.get(f"T{t.number}", [])})
    pages = {k: runs.run_page(runs_dir, k) for k in sorted(
        {k for r in all_rows for k in r["runs"].split()})}
    prov = {k: provenance_text(p.config_hash, p.provenance) for k, p in pages.items()}
    env, out = _env(), {}
    for p in pages.values():
        out[f"runs/{p.page}"] = out_dir / "runs" / p.page
        _write(out[f"runs/{p.page}"], env.get_template("run.html.j2").render(
            run=p, provenance=p.provenance, test=p.test, title=context["title"],
            root="../", pdf=context.get("pdf", True)))
    for t in per_table:
        t["html"] = datatable(numbers_frame(t["rows"], prov), f"dt-{t['id']}") if t["rows"] else ""
    common = {"title": context["title"], "root": "", "colours": COLOURS, "rule": compare.RULE,
              "init": itables_init(), "verdicts": claims_mod.VERDICTS,
              "pdf": context.get("pdf", True)}
    out["tables.html"] = out_dir / "tables.html"
    _write(out["tables.html"], env.get_template("tables.html.j2").render(
        tables=per_table, explain=flags.EXPLAIN, **common))
    number_counts = {v: sum(r["verdict"] == v for r in all_rows)
                     for v in (*compare.NUMBER_VERDICTS, "no paper value")}
    out["index.html"] = out_dir / "index.html"
    _write(out["index.html"], env.get_template("index.html.j2").render(
        claims=datatable(claims_frame(found), "dt-claims") if found else "",
        counts=claims_mod.verdict_counts(found), number_counts=number_counts,
        n_claims=len(found), tables=per_table, context=context, cut=runs.cut(pages), **common))
    out["numbers.csv"] = out_dir / "numbers.csv"
    with atomic_path(out["numbers.csv"]) as tmp:
        pd.DataFrame(all_rows, columns=numbers.COLUMNS).to_csv(tmp, index=False)
    return out

