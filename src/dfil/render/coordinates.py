"""The names ``config/tables.yaml`` gives the cells it reads (backbones, tasks, variants,
seed sets), checked against the grids (pure Python).

The tables are written in the paper's coordinates. A grid runs some of them and its
``render:`` map stands its own cells in for others; a row that names a backbone the grid
being built does not run is a row with no runs in this grid, and its caption says so. A
name that no grid knows is different: a typo, which would read as such a row. So every
name must be known to the grid being built (its own names, and the paper's names its
render map maps), to the paper's grid (``paper.yaml`` beside the tables file, whose
coordinates the tables use), or, for a backbone, to the catalogue of backbone shapes
(:data:`dfil.cost.archs.ARCHS`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from dfil.config.validation import validate
from dfil.config.yamlfile import load_yaml
from dfil.cost.archs import ARCHS
from dfil.render.table_spec import TablesFile, selectors, unknown
from dfil.util.errors import ConfigError

#: A selector's key -> (the grid section that declares its names, also the name of the
#: render map that maps them; its name in messages).
KINDS = {"backbone": ("backbones", "backbone"), "task": ("tasks", "task"),
         "variant": ("variants", "variant"), "seeds": ("seed_sets", "seed set")}


def known_names(grids: Iterable[Mapping]) -> dict[str, set[str]]:
    """Selector key -> every name ``grids`` (grid configs) declare or map for it, the
    backbone catalogue's included; a variant may also be none ("")."""
    known: dict[str, set[str]] = {"backbone": set(ARCHS), "task": set(), "variant": {""},
                                  "seeds": set()}
    for grid in grids:
        render = grid.get("render") or {}
        for key, (section, _) in KINDS.items():
            known[key] |= set(grid.get(section) or {}) | set(render.get(section) or {})
    return known


def paper_grid(tables_path: str | Path) -> list[Mapping]:
    """The paper's grid config beside the tables file (none if it is not there)."""
    path = Path(tables_path).parent / "paper.yaml"
    return [load_yaml(path) or {}] if path.is_file() else []


def check_coordinates(specs: Mapping, grid: Mapping, path: str | Path) -> None:
    """:class:`ConfigError` naming ``path``, the table, the dotted key and the closest
    known name, for the first backbone, task, variant or seed set of the tables ``specs``
    that neither the grid config ``grid`` nor the paper's grid nor the backbone
    catalogue knows (see the module docstring)."""
    known = known_names([grid, *paper_grid(path)])
    for name, table in validate(TablesFile, specs).root.items():
        for where, selector in selectors(table):
            for key, (_, words) in KINDS.items():
                value = getattr(selector, key)
                if value is not None and value not in known[key]:
                    raise ConfigError(f"{path}: {name}.{where}.{key}: "
                                      f"{unknown(f'{words} of any grid', value, known[key])}")
