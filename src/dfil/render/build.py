"""Rendering steps as the DAG runs them: one table from its run directories, and the
report's LaTeX side (the figures, the document that inputs every table)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dfil import __version__
from dfil.config.grid import Grid
from dfil.render import file_stem, table_keys, table_names
from dfil.render.entries import Table
from dfil.render.latex import environment, render_document, render_table
from dfil.render.resolve import Resolver
from dfil.render.source import Source
from dfil.results.aggregate import aggregate, run_hashes
from dfil.util.atomic import atomic_write_text
from dfil.util.commit import git_commit
from dfil.util.errors import MissingInputError


def table_frame(specs: dict, grid: Grid, name: str, runs: Path) -> pd.DataFrame:
    """The aggregate rows of the run directories table ``name`` reads; ``FileNotFoundError``
    naming the first run without metrics (its cell has not been evaluated)."""
    files = []
    for key in table_keys(specs, grid, name):
        path = Path(runs) / key / "metrics.json"
        if not path.exists():
            raise MissingInputError(f"{path}: cell {key} (needed by table {name}) has no "
                                    "metrics; evaluate it first")
        files.append(path)
    return aggregate(files, runs, {key: grid.config_hash(key)
                                   for key in table_keys(specs, grid, name)})


def render_one(specs: dict, source: Source, name: str, config_files: list[str],
               runs: Path) -> str:
    """The ``.tex`` of table ``name`` from ``source`` (the aggregate rows of its runs,
    with the degenerate-evidence check of its entries, :class:`Source`'s ``check``)."""
    grid, frame = source.grid, source.frame
    table = Resolver(specs, source).table(name)
    prov = {"package_version": __version__, "git_commit": git_commit(),
            "config": grid.name, "config_files": " ".join(map(str, config_files)),
            "runs": str(runs), "n_runs": len(table.keys), "keys": sorted(table.keys),
            "hashes": run_hashes(frame) if frame is not None and len(frame) else {},
            "spec": spec_digest(specs[name])}
    standin = grid.config.get("render", {}).get("standin", "")
    return render_table(environment(), table, prov, standin)


def spec_digest(spec: dict) -> str:
    """The first 12 hex digits of the sha256 of a table's ``config/tables.yaml`` entry: a
    table made from an edited entry is a new table (:mod:`dfil.render.publish`)."""
    text = json.dumps(spec, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def render_to(specs: dict, grid: Grid, name: str, runs: Path, out: Path,
              how: tuple[list[str], Callable | None]) -> Path:
    """Table ``name`` rendered from its run directories under ``runs`` into ``out``;
    ``how``: the grid's config files (for provenance) and the degenerate check."""
    config_files, check = how
    source = Source(grid, table_frame(specs, grid, name, runs), check)
    atomic_write_text(Path(out), render_one(specs, source, name, config_files, runs))
    return Path(out)


def resolve_tables(specs: dict, grid: Grid, frame: pd.DataFrame,
                   check: Callable | None = None) -> list[Table]:
    """Every table of ``specs`` resolved from the aggregate ``frame``, in paper order
    (``check``: as :func:`render_one`'s)."""
    resolver = Resolver(specs, Source(grid, frame, check))
    return [resolver.table(n) for n in table_names(specs)]


def report(specs: dict, grid: Grid, frame: pd.DataFrame, tables: list[Table],
           tex_dir: Path, figs: dict) -> tuple[dict[str, Path], dict[str, str]]:
    """``figures/*.png`` (``figs``, as ``config/figures.yaml`` declares them:
    :func:`dfil.render.figure_spec.check_figures`) and
    ``tables.tex`` (the document that inputs every table;
    :func:`dfil.render.pdf.compile_pdf` makes ``tables.pdf`` of it) in ``tex_dir`` (which
    holds the rendered ``.tex`` files), from ``tables`` (:func:`resolve_tables`): the files
    written, and each figure's caption (by its file relative to ``tex_dir``, from what it
    drew)."""
    # matplotlib only here: a table's render job draws no figure (0.5 s of imports).
    from dfil.render import figures

    tex_dir = Path(tex_dir)
    names = table_names(specs)
    standin = grid.config.get("render", {}).get("standin", "")
    header = f"config {grid.name}" + (f" ({standin})" if standin else "")
    out, captions = {}, {}
    drawn = figures.write_figures(Source(grid, frame), specs, tex_dir / "figures", header,
                                  figs)
    for path, text in drawn.items():
        out[f"figures/{path.name}"] = path
        captions[f"figures/{path.name}"] = text
    missing = [n for n in names if not (tex_dir / f"{file_stem(specs, n)}.tex").exists()]
    if missing:
        raise MissingInputError(f"{tex_dir}: tables not rendered yet: {missing}")
    doc = render_document(environment(), [file_stem(specs, n) for n in names],
                          f"DFIL reproduction: {header}", standin)
    out["tables.tex"] = tex_dir / "tables.tex"
    atomic_write_text(out["tables.tex"], doc)
    return out, captions
