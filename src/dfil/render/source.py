"""Where a table's numbers come from: the tidy aggregate table, read through the grid
(pure: pandas, no torch).

Tables (``config/tables.yaml``) name cells in the paper's own coordinates - backbone
``qwen2.5-7b``, lambda 0.1, variant ``bs64``, seed set ``twenty``. A grid that runs on
other coordinates (the embedded default, the smoke grid) says in its ``render:`` section
what stands in for what; :class:`Source` applies that map, so a cell is looked up under the
grid's own run key, and returns every substitution it made with what it found, so the
caption can say so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from dfil.config.grid import Grid
from dfil.config.runkey import FIELDS, RunPoint, applicable, fmt_lambda, format_key
from dfil.contracts.failure import failure_words
from dfil.results.aggregate import failure_reason
from dfil.util.errors import ConfigError, MetricsError

#: The coordinates of a cell (everything in a run key but the seed).
COORDS = FIELDS[:-1]
#: Keys a ``where`` may hold besides the coordinates.
SELECTORS = COORDS + ("seeds", "seed", "metric", "scale")
#: A render-map substitution: (map, the paper's name, the grid's name), e.g.
#: ``("backbones", "qwen2.5-7b", "tiny-llama")``.
Substitution = tuple[str, str, str]
#: What a number was read from: (run key, metric), found or not.
Read = tuple[str, str]


@dataclass(frozen=True)
class Selection:
    """The grid's run keys a selector names (one per seed, sorted by seed), and the
    render-map substitutions that named them."""

    keys: tuple[str, ...]
    substituted: frozenset[Substitution]


@dataclass(frozen=True)
class Sample:
    """A metric's value per seed (index: seed, times ``scale``; runs that lack the metric
    left out), every (run key, metric) asked for, the substitutions made, and, when a run
    of the cell failed, what the table says in its place (``failed``; no values then)."""

    values: pd.Series
    reads: frozenset[Read]
    substituted: frozenset[Substitution]
    failed: str = ""


class Source:
    """Per-seed values of one metric for one cell, from an aggregate frame.

    ``frame`` is :func:`dfil.results.aggregate.aggregate`'s table (or ``None`` to only ask
    which cells a table needs: every value is then missing). A source never changes once
    built: each answer carries the substitutions it made. ``check(values, reads,
    lookup)`` says why an entry's runs are degenerate evidence
    (:func:`dfil.claims.degenerate.check`, given by the caller; None: none are).
    """

    def __init__(self, grid: Grid, frame: pd.DataFrame | None = None,
                 check: Callable | None = None):
        self.grid = grid
        self.frame = frame
        self.check = check
        self.map = grid.config.get("render", {})
        self._values: dict[Read, float] = {}
        #: run key of each cell that gave up (a failure record) -> its reason
        self.failed: dict[str, str] = {}
        #: run key of each run with numbers -> (git commit, library versions text) that
        #: made it, where the aggregate records them (:func:`dfil.results.origin.origin_note`)
        self.origins: dict[str, tuple[str, str]] = {}
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
            self.failed = {k: reason for k, m in zip(keys, frame["metric"], strict=True)
                           if (reason := failure_reason(m)) is not None}
            commits = frame.get("git_commit", pd.Series("", index=frame.index))
            libraries = frame.get("libraries", pd.Series("", index=frame.index))
            self.origins = {k: (str(c), str(v)) for k, c, v in zip(
                keys, commits.fillna(""), libraries.fillna(""), strict=True)
                if k not in self.failed}  # a failed run prints no number

    def _mapped(self, kind: str, value) -> tuple[object, frozenset[Substitution]]:
        """``value`` through the grid's ``render.<kind>`` map, and the substitution made
        (none when the map keeps the name)."""
        table = self.map.get(kind, {})
        key = fmt_lambda(value) if kind == "lambdas" else str(value)
        if key not in table:
            return value, frozenset()
        new = table[key]
        if str(new) == key:
            return new, frozenset()
        return new, frozenset({(kind, key or "(none)", str(new) or "(none)")})

    def _seeds(self, where: Mapping) -> tuple[list[str] | None, frozenset[Substitution]]:
        if "seed" in where:
            return [str(where["seed"])], frozenset()
        name = where.get("seeds")
        if name is None:
            return None, frozenset()
        name, substituted = self._mapped("seed_sets", name)
        try:
            return [str(s) for s in self.grid.config["seed_sets"][name]], substituted
        except KeyError:
            raise ConfigError(f"seed set {name!r} is not in the grid's seed_sets") from None

    def select(self, where: Mapping) -> Selection:
        """The grid's run keys of the cell ``where`` names, and the substitutions made."""
        missing = [c for c in ("task", "backbone", "method") if c not in where]
        if missing:
            raise ConfigError(f"a table entry needs {', '.join(missing)}")
        task, s_task = self._mapped("tasks", where["task"])
        backbone, s_backbone = self._mapped("backbones", where["backbone"])
        variant, s_variant = self._mapped("variants", where.get("variant", ""))
        lam, s_lam = self._mapped("lambdas", where.get("lam", 0.5))
        point = applicable(RunPoint(task, backbone, where["method"], variant, lam,
                                    where.get("budget", "full"), where.get("init", "qure"), 0))
        prefix = format_key(replace(point, seed=""))
        seeds, s_seeds = self._seeds(where)
        found = [k for k in self.grid.cells if k.startswith(prefix)
                 and (seeds is None or k[len(prefix):] in seeds or k.endswith("seedna"))]
        order = {s: i for i, s in enumerate(seeds or [])}
        keys = sorted(found, key=lambda k: (order.get(k[len(prefix):], 0), k))
        return Selection(tuple(keys), s_task | s_backbone | s_variant | s_lam | s_seeds)

    def keys(self, where: Mapping) -> list[str]:
        """The grid's run keys of the cell ``where`` names (one per seed), sorted by seed."""
        return list(self.select(where).keys)

    def sample(self, where: Mapping) -> Sample:
        """The metric's value per seed of the cell ``where`` names, with what it read. No
        value at all when one of the cell's runs failed (a failure record): an entry that
        reads a failed run is not available, never a mean of the runs that finished, and
        says why (the first failed run's reason in
        :func:`dfil.contracts.failure.failure_words`)."""
        metric = where.get("metric")
        if metric is None:
            raise ConfigError("a table entry needs a metric")
        scale = float(where.get("scale", 1.0))
        selection = self.select(where)
        out = {}
        failed = next((failure_words(self.failed[k]) for k in selection.keys
                       if k in self.failed), "")
        for key in () if failed else selection.keys:
            value = self._values.get((key, metric))
            if value is not None:
                out[key.rsplit("/seed", 1)[1]] = value * scale
        return Sample(pd.Series(out, dtype=float),
                      frozenset((key, metric) for key in selection.keys),
                      selection.substituted, failed)

    def value(self, key: str, metric: str) -> float | None:
        """The aggregate's value of ``metric`` for run ``key`` (None: none)."""
        return self._values.get((key, metric))

    def degenerate(self, values, reads: frozenset[Read]) -> str:
        """Why an entry whose seeds gave ``values`` from ``reads`` is degenerate evidence
        ("" when it is not, or no ``check`` was given)."""
        return self.check(values, reads, self.value) if self.check and reads else ""

    def values(self, where: Mapping) -> pd.Series:
        """The metric's value per seed (index: seed), times ``scale``; runs that lack the
        metric are left out."""
        return self.sample(where).values
