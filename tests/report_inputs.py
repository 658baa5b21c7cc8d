"""What ``dfil report`` reads, made without runs: every table of a grid rendered from a
synthetic aggregate (each number the tables read a seeded uniform draw in [0.1, 0.9])."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dfil.config.grid import load_grid_files
from dfil.config.runkey import parse_key
from dfil.render import file_stem, table_names
from dfil.render.build import render_one
from dfil.render.resolve import Resolver
from dfil.render.source import Source


def synthetic_report_inputs(grid_file: Path, specs: dict, tmp_path: Path) -> tuple[Path, Path]:
    """``(tex_dir, aggregate)``: ``tmp_path/tables`` holding every table of ``specs`` for
    the grid in ``grid_file``, and ``tmp_path/metrics.parquet``, the aggregate they read."""
    grid = load_grid_files([grid_file])
    resolver = Resolver(specs, Source(grid))
    requested = sorted(set().union(*(resolver.table(n).reads for n in table_names(specs))))
    rng = np.random.default_rng(0)
    agg = pd.DataFrame([{**parse_key(k), "metric": m, "value": float(rng.uniform(0.1, 0.9)),
                         "run_dir": k, "config_hash": "0" * 16} for k, m in requested])
    tex_dir = tmp_path / "tables"
    tex_dir.mkdir()
    for name in table_names(specs):
        (tex_dir / f"{file_stem(specs, name)}.tex").write_text(
            render_one(specs, Source(grid, agg), name, [str(grid_file)], Path("runs")))
    aggregate = tmp_path / "metrics.parquet"
    agg.to_parquet(aggregate)
    return tex_dir, aggregate
