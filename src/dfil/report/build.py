"""The report as ``dfil report`` writes it: the pages of :mod:`dfil.report.site` with
what the grid, the run directories and the figures say around them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dfil.claims import control_result
from dfil.claims.controls import cell_coordinates
from dfil.config.grid import Grid
from dfil.config.runkey import FIELDS, RunPoint, format_key
from dfil.render.entries import Table
from dfil.render.text import template_heads
from dfil.report import site
from dfil.results.status import unfinished
from dfil.util.commit import git_commit


@dataclass(frozen=True)
class Findings:
    """What the report shows beside the tables: ``power``, what each claim's seeds could
    show and the coverage of the plan that wrote the grid, if one did
    (:class:`dfil.plan.achieved.Standings`; None: not shown), and ``controls``, the
    positive controls' result rows (:func:`control_results`)."""

    power: object = None
    controls: tuple[dict, ...] = ()


def control_results(grid: Grid, frame: pd.DataFrame | None) -> list[dict]:
    """The result row of each of the grid's positive controls
    (:func:`dfil.claims.control_result`), from the aggregate table ``frame``."""
    controls = grid.spec.controls
    if not controls or frame is None:
        return []
    rows = frame[frame["metric"].isin({c.metric for c in controls.values()})]
    found = {(format_key(RunPoint(*r[:-2])), r[-2]): float(r[-1])
             for r in rows[[*FIELDS, "metric", "value"]].itertuples(index=False)}
    out = []
    for name, c in controls.items():
        pairs = grid.control_pairs(name)
        out.append(control_result(
            name, c, [(found.get((a, c.metric)), found.get((b, c.metric))) for a, b in pairs],
            "; ".join(f"{a} vs {b}" for a, b in pairs), [cell_coordinates(b) for _, b in pairs]))
    return out


def write_site(tables: list[Table], grid: Grid, tables_dir: Path,
               figures: dict[str, str], pdf: bool = True,
               found: Findings = Findings()) -> dict[str, Path]:
    """Every page of the report for ``grid`` beside its rendered tables; ``figures``: each
    figure's file (relative to the tables) and its caption
    (:func:`dfil.render.figures.captions`); ``pdf``: whether ``tables.pdf`` is built beside
    them (else the pages link ``tables.tex``); ``found``: the claims' power and the
    positive controls' results (:class:`Findings`)."""
    runs = Path(grid.results) / "runs"
    context = {"title": "DFIL reproduction", "grid": grid.name,
               "standin": str(grid.config.get("render", {}).get("standin", "")).strip(),
               "commit": git_commit(), "figures": figures,
               "pdf": pdf, "controls": list(found.controls),
               "power": found.power.claims if found.power else {},
               "plan": found.power.coverage if found.power else "",
               "failures": {key: f"{reason} (log: {log})"
                            for key, (reason, log) in unfinished(grid).items()}}
    heads = {t.name: template_heads(t.name) for t in tables}
    return site.write_pages(tables, heads, context, runs, tables_dir)
