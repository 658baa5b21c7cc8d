"""The report as ``dfil report`` writes it: the pages of :mod:`dfil.report.site` with
what the grid, the run directories and the figures say around them."""

from __future__ import annotations

from pathlib import Path

from dfil.grid import Grid
from dfil.provenance import git_commit
from dfil.render.entries import Table
from dfil.render.text import template_heads
from dfil.report import site
from dfil.results.status import unfinished


def write_site(tables: list[Table], grid: Grid, tables_dir: Path,
               figures: dict[str, str], pdf: bool = True, power=None) -> dict[str, Path]:
    """Every page of the report for ``grid`` beside its rendered tables; ``figures``: each
    figure's file (relative to the tables) and its caption
    (:func:`dfil.render.figures.captions`); ``pdf``: whether ``tables.pdf`` is built beside
    them (else the pages link ``tables.tex``); ``power``: what each claim's seeds could
    show and the coverage of the plan that wrote the grid, if one did
    (:class:`dfil.plan.achieved.Standings`; None: not shown)."""
    runs = Path(grid.results) / "runs"
    context = {"title": "DFIL reproduction", "grid": grid.name,
               "standin": str(grid.config.get("render", {}).get("standin", "")).strip(),
               "commit": git_commit(), "figures": figures,
               "pdf": pdf,
               "power": power.claims if power else {}, "plan": power.coverage if power else "",
               "failures": {key: f"{reason} (log: {log})"
                            for key, (reason, log) in unfinished(grid).items()}}
    heads = {t.name: template_heads(t.name) for t in tables}
    return site.write_site(tables, heads, context, runs, tables_dir)
