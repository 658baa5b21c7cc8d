"""Where a table's numbers come from: the tidy aggregate table, read through the grid
(pure: pandas, no torch).

Tables (``config/tables.yaml``) name cells in the paper's own coordinates - backbone
``qwen2.5-7b``, lambda 0.1, variant ``bs64``, seed set ``twenty``. A grid that runs on
other coordinates (the embedded default, the smoke grid) says in its ``render:`` section
what stands in for what; :class:`Source` applies that map, so a cell is looked up under the
grid's own run key, and remembers every substitution so the caption can say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from dfil.errors import ConfigError, MetricsError
from dfil.grid import Grid
from dfil.results.aggregate import FAILED
from dfil.runkey import FIELDS, RunPoint, applicable, fmt_lambda, format_key

#: The coordinates of a cell (everything in a run key but the seed).
COORDS = FIELDS[:-1]
#: Keys a ``where`` may hold besides the coordinates.
SELECTORS = COORDS + ("seeds", "seed", "metric", "scale")


class Source:
    """Per-seed values of one metric for one cell, from an aggregate frame.

    ``frame`` is :func:`dfil.results.aggregate.aggregate`'s table (or ``None`` to only ask which
    cells a table needs, :meth:`keys`).
    """

    def __init__(self, grid: Grid, frame: pd.DataFrame | None = None):
        self.grid = grid
        self.map = grid.config.get("render", {})
        self.substituted: set[tuple[str, str, str]] = set()
        #: every (run key, metric) asked for, found or not
        self.requested: set[tuple[str, str]] = set()
        self._values: dict[tuple[str, str], float] = {}
        #: run keys of cells that gave up (a failure record): their entries are n/a
        self.failed: set[str] = set()
        if frame is not None and len(frame):
            bad = frame[~np.isfinite(frame["value"].to_numpy(dtype=float))]
            if len(bad):
                row = bad.iloc[0]
                raise MetricsError(f"{row.get('run_dir', '?')}: metric {row['metric']} is "
                                 f"{row['value']}; a non-finite number never becomes a table "
                                 f"number ({len(bad)} such rows)")
            keys = [format_key(RunPoint(*r))
                    for r in frame[list(COORDS) + ["seed"]].itertuples(index=False)]
            self._values = dict(zip(zip(keys, frame["metric"], strict=True), frame["value"],
                                    strict=True))
            self.failed = {k for k, m in zip(keys, frame["metric"], strict=True) if m == FAILED}

    def _mapped(self, kind: str, value):
        table = self.map.get(kind, {})
        key = fmt_lambda(value) if kind == "lambdas" else str(value)
        if key in table:
            new = table[key]
            if str(new) != key:
                self.substituted.add((kind, key or "(none)", str(new) or "(none)"))
            return new
        return value

    def _seeds(self, where: Mapping) -> list[str] | None:
        if "seed" in where:
            return [str(where["seed"])]
        name = where.get("seeds")
        if name is None:
            return None
        name = self._mapped("seed_sets", name)
        try:
            return [str(s) for s in self.grid.config["seed_sets"][name]]
        except KeyError:
            raise ConfigError(f"seed set {name!r} is not in the grid's seed_sets") from None

    def keys(self, where: Mapping) -> list[str]:
        """The grid's run keys of the cell ``where`` names (one per seed), sorted by seed."""
        missing = [c for c in ("task", "backbone", "method") if c not in where]
        if missing:
            raise ConfigError(f"a table cell needs {', '.join(missing)}")
        task = self._mapped("tasks", where["task"])
        backbone = self._mapped("backbones", where["backbone"])
        variant = self._mapped("variants", where.get("variant", ""))
        lam = self._mapped("lambdas", where.get("lam", 0.5))
        point = applicable(RunPoint(task, backbone, where["method"], variant, lam,
                                    where.get("budget", "full"), where.get("init", "qure"), 0))
        prefix = format_key(replace(point, seed=""))
        seeds = self._seeds(where)
        found = [k for k in self.grid.cells if k.startswith(prefix)
                 and (seeds is None or k[len(prefix):] in seeds or k.endswith("seedna"))]
        order = {s: i for i, s in enumerate(seeds or [])}
        return sorted(found, key=lambda k: (order.get(k[len(prefix):], 0), k))

    def values(self, where: Mapping) -> pd.Series:
        """The metric's value per seed (index: seed), times ``scale``; runs that lack the
        metric are left out. None at all when one of the cell's runs failed: an entry
        that reads a failed run is not available, never a mean of the runs that finished."""
        metric = where.get("metric")
        if metric is None:
            raise ConfigError("a table cell needs a metric")
        scale = float(where.get("scale", 1.0))
        keys = self.keys(where)
        if self.failed.intersection(keys):
            self.requested.update((key, metric) for key in keys)
            return pd.Series({}, dtype=float)
        out = {}
        for key in keys:
            self.requested.add((key, metric))
            value = self._values.get((key, metric))
            if value is not None:
                out[key.rsplit("/seed", 1)[1]] = value * scale
        return pd.Series(out, dtype=float)
