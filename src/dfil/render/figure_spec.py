"""What ``config/figures.yaml`` may declare: the report's figures, each the cells it draws
in the paper's coordinates (a :class:`~dfil.render.table_spec.Selector`, as a table's
``where``), its series, the paper's numbers it overlays and its caption (pydantic).

A figure's kind of drawing (membership functions, center drift, curves by budget, points
by depth) is code in :mod:`dfil.render.figures`; which methods, metrics and paper rows it
draws is declared here, so a figure names no method in code.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from dfil.config.cell import MethodName
from dfil.config.validation import StrictModel, TupleOf, validate
from dfil.config.yamlfile import load_yaml
from dfil.render.table_spec import Selector, unknown
from dfil.util.errors import ConfigError, did_you_mean

#: The kinds of figure the report draws (:data:`dfil.render.figures.FIGURES`), each
#: declared once in ``config/figures.yaml``.
KINDS = ("membership_functions", "center_drift", "fewshot_curves", "compositional_depth")


class Series(StrictModel):
    """One series of a figure: its legend ``label``, the ``method`` and ``metric`` it draws
    (a metric may hold ``{depth}``, the composition depth), and ``paper``, the row or
    column of the figure's paper table it overlays (may hold ``{level}``, the paper's
    composition level)."""

    label: str
    method: MethodName
    metric: str
    paper: str


class FigureSpec(StrictModel):
    """One figure: the cells it draws (``where``), the paper table whose numbers it
    overlays (``paper_table``; for the centers, the rows of its seeds, ``paper_rows``,
    seed -> row, and of the initialisation, ``paper_init``), the budgets of a curve by
    budget, its ``series`` and its ``caption`` (``{runs}``, ``{n}`` and ``{seeds}`` filled
    from what it drew)."""

    where: Selector
    paper_table: str
    paper_rows: dict[str, str] = Field(default_factory=dict)
    paper_init: str = ""
    budgets: TupleOf[int] = ()
    series: TupleOf[Series] = ()
    caption: str

    def cells(self, **more) -> dict:
        """The coordinates this figure's cells share, with ``more`` over them."""
        return {**self.where.model_dump(exclude_unset=True), **more}


def load_figures(path: str | Path, drawn: tuple[str, ...] = KINDS) -> dict[str, FigureSpec]:
    """The figures ``path`` declares, each one of the kinds ``drawn`` (every one of them
    declared); :class:`ConfigError` naming the file and the figure otherwise."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of figure name to figure")
    for name in data:
        if name not in drawn:
            raise ConfigError(f"{path}: figure {name!r} is not one the report draws; "
                              f"{did_you_mean(name, drawn)}figures: {', '.join(drawn)}")
    if missing := [name for name in drawn if name not in data]:
        raise ConfigError(f"{path}: no figure {', '.join(missing)} declared")
    out = {}
    for name in drawn:
        try:
            out[name] = validate(FigureSpec, data[name])
        except ConfigError as err:
            raise ConfigError(f"{path}: figure {name}: {err}") from None
    return out


def check_figures(path: str | Path, specs: Mapping, grid: Mapping,
                  tables_path: str | Path) -> dict[str, FigureSpec]:
    """The figures of ``path`` (:func:`load_figures`), their cells checked against the
    grids as the tables' are (:func:`dfil.render.coordinates.check_selectors`: a name or
    number no grid has is a typo), each paper table one of ``specs``; :class:`ConfigError`
    naming the file, figure and key otherwise."""
    from dfil.render.coordinates import check_selectors

    figs = load_figures(path)
    check_selectors(((f"{name}.where", fig.where) for name, fig in figs.items()), grid, path,
                    tables_path)
    for name, fig in figs.items():
        if fig.paper_table not in specs:
            raise ConfigError(f"{path}: {name}.paper_table: "
                              f"{unknown('table of ' + str(tables_path), fig.paper_table, specs)}")
    return figs
