"""Every name the grid's ``render:`` map and ``controls:`` give, checked against the grid
that runs them when the grid is read, before anything is built (pure Python).

The render map stands the grid's own cells in for the paper's coordinates: each value
must be a backbone, task, variant or seed set the grid declares, and each lambda one its
groups run; a mistyped value would otherwise leave every entry it feeds with no runs,
silently. A control's metric must be a measurement of ``metrics.json``
(:func:`dfil.contracts.metrics.measure_problem`), or the control could never be judged.
"""

from __future__ import annotations

import math

from dfil.config.gridfile import GridFile
from dfil.contracts.metrics import measure_problem
from dfil.util.errors import ConfigError, did_you_mean

#: A render map's section -> the grid section declaring the names it may map to.
MAPPED = {"backbones": "backbones", "tasks": "tasks", "variants": "variants",
          "seed_sets": "seed_sets"}


def _fmt(value: float) -> str:
    return f"{value:g}"


def check_render_map(grid: GridFile) -> None:
    """:class:`ConfigError` naming the dotted key, the value and what the grid has (with
    the closest name) for the first render-map value the grid does not run, render-map
    lambda key that is no number, or control metric that is no measurement."""
    render = grid.render
    for section, declared_in in MAPPED.items():
        declared = set(getattr(grid, declared_in))
        if section == "variants":
            declared.add("")  # the paper's variant run as the grid's plain cells
        for paper, ours in getattr(render, section).items():
            if ours not in declared:
                raise ConfigError(
                    f"render.{section}.{paper}: {ours!r} is not in {declared_in} "
                    f"({did_you_mean(ours, declared)}the grid has "
                    f"{', '.join(sorted(map(repr, declared))) or 'none'})")
    runs = sorted({float(lam) for group in grid.groups.values() for lam in group.lambdas})
    for paper, ours in render.lambdas.items():
        try:
            number = float(paper)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise ConfigError(f"render.lambdas: key {paper!r} is not a lambda (a finite "
                              "number, as the paper's tables name it)")
        if float(ours) not in runs:
            raise ConfigError(f"render.lambdas.{paper}: {_fmt(ours)} is not a lambda any "
                              f"group runs (the grid runs {', '.join(map(_fmt, runs))})")
    for name, control in grid.controls.items():
        if problem := measure_problem(control.metric):
            raise ConfigError(f"controls.{name}.metric: {problem}")
