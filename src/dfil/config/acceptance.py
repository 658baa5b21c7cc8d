"""The acceptance run a grid declares (``acceptance:``), run by ``snakemake acceptance``
before the grid: its section, the check that it names a cell and a backbone of the grid,
and the runs it makes (pure Python)."""

from __future__ import annotations

from collections.abc import Mapping

from dfil.config.validation import Count, StrictModel
from dfil.core.methods import method_spec
from dfil.util.errors import ConfigError


class Acceptance(StrictModel):
    """The acceptance run before the grid (``snakemake acceptance``): one cell trained,
    evaluated and its training step timed, and one backbone loaded in 4-bit for a few
    timed training steps, each recorded in ``results/<grid>/acceptance/``."""

    cell: str
    """A run key of this grid (a 7B-class cell on the paper grid)."""
    qlora: str
    """A backbone of this grid, loaded in 4-bit (QLoRA) on a cell of its own."""
    steps: Count = 10
    """Timed training steps of each (after two untimed ones)."""


def _backbone(cell) -> str:
    return cell.config["model"]["backbone"]["name"]


def check_acceptance(spec: Acceptance | None, cells: Mapping) -> None:
    """The acceptance run's cell is one of ``cells`` (the grid's :class:`dfil.config.grid.Cell`
    by key) and its 4-bit backbone one some of them train: :class:`ConfigError` naming the
    key."""
    if spec is None:
        return
    if spec.cell not in cells:
        raise ConfigError(f"acceptance.cell: {spec.cell!r} is not a cell of this grid "
                          "(`dfil grid list --config <grid>` lists them)")
    used = {_backbone(c) for c in cells.values()}
    if spec.qlora not in used:
        raise ConfigError(f"acceptance.qlora: {spec.qlora!r} is no backbone of this grid's "
                          f"cells ({', '.join(sorted(used))})")


def acceptance_runs(spec: Acceptance | None, cells: Mapping) -> dict[str, tuple[str, str]]:
    """``snakemake acceptance``'s runs, kind -> (cell key, backbone): ``cell``, the cell
    trained and evaluated; ``qlora``, the 4-bit backbone's first DFIL cell (else its first
    that trains), whose config builds the model. Empty without an ``acceptance:``
    section."""
    if spec is None:
        return {}
    method = {k: c.config["model"]["method"] for k, c in cells.items()}
    first = min((not method_spec(method[k]).trains, method[k] != "dfil", k)
                for k, c in cells.items() if _backbone(c) == spec.qlora)[-1]
    return {"cell": (spec.cell, _backbone(cells[spec.cell])), "qlora": (first, spec.qlora)}
