"""The names ``config/tables.yaml`` gives the cells it reads (backbones, tasks, variants,
seed sets), checked against the grids (pure Python).

The tables are written in the paper's coordinates. A grid runs some of them and its
``render:`` map stands its own cells in for others; a row that names a backbone the grid
being built does not run is a row with no runs in this grid, and its caption says so. A
name that no grid knows is different: a typo, which would read as such a row. So every
name must be known to the grid being built (its own names, and the paper's names its
render map maps), to the paper's grid (``paper.yaml`` beside the tables file, whose
coordinates the tables use), or, for a backbone, to the catalogue of backbone shapes
(:data:`dfil.cost.archs.ARCHS`). The same holds for a cell's numbers: a lambda, budget, MF
init or seed no grid runs is a typo (``budget: 61``), named with the nearest values the
grids run, never a row with no runs.

A strict grid (``render.strict``: the paper, smoke and embedded grids, which render the
tables in full) is held to itself alone: each coordinate a table names is one it runs or
maps, unless the entry's layer says ``expect: not run``, a cell this grid leaves out on
purpose (the smoke grid runs no 64-example few-shot budget); the mark covers the whole
layer, and the paper's own grid, which runs every cell, ignores it. So ``budget: 16 -> 64``
is an error on the smoke grid, although the paper's grid runs 64. A grid cut down to
rerun a few cells (a plan, a CI grid) is not strict and renders the rest as rows with no
runs.
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


def known_names(grids: Iterable[Mapping], catalogue: bool = True) -> dict[str, set[str]]:
    """Selector key -> every name ``grids`` (grid configs) declare or map for it, the
    backbone catalogue's included unless ``catalogue`` is false; a variant may also be
    none ("")."""
    known: dict[str, set[str]] = {"backbone": set(ARCHS) if catalogue else set(),
                                  "task": set(), "variant": {""}, "seeds": set()}
    for grid in grids:
        render = grid.get("render") or {}
        for key, (section, _) in KINDS.items():
            known[key] |= set(grid.get(section) or {}) | set(render.get(section) or {})
    return known


#: A selector's numeric coordinate -> the group list holding the values grids run.
VALUES = {"lam": "lambdas", "budget": "budgets", "init": "inits", "seed": "seeds"}


def run_values(grids: Iterable[Mapping]) -> dict[str, set]:
    """Coordinate -> every value the groups of ``grids`` run (a seed set's seeds too, and
    the paper lambdas a render map names)."""
    found: dict[str, set] = {key: set() for key in VALUES}
    for grid in grids:
        seed_sets = grid.get("seed_sets") or {}
        for group in (grid.get("groups") or {}).values():
            for key, field in VALUES.items():
                values = group.get(field) or ()
                if key == "seed" and isinstance(values, str):
                    values = seed_sets.get(values) or ()
                found[key] |= {float(v) if key == "lam" else v for v in values}
        found["lam"] |= {float(k) for k in ((grid.get("render") or {}).get("lambdas") or {})}
    return found


def nearest(value, runs: set, n: int = 2) -> str:
    """The ``n`` values of ``runs`` nearest ``value`` (numbers by distance, names as
    given), in order: ``16, 64``."""
    numbers = sorted(v for v in runs if isinstance(v, (int, float)))
    names = sorted(str(v) for v in runs if not isinstance(v, (int, float)))
    if isinstance(value, (int, float)) and numbers:
        close = sorted(sorted(numbers, key=lambda v: (abs(v - value), v))[:n])
        return ", ".join(f"{v:g}" for v in close) + (f" (and {', '.join(names)})"
                                                      if names else "")
    return ", ".join([*names, *(f"{v:g}" for v in numbers)])


def _where(table, where: str) -> str:
    """``columns[2]`` with the column's id: ``columns[2] (column fewshot)``."""
    if where.startswith("columns["):
        index = int(where[len("columns["):where.index("]")])
        return f"{where} (column {table.columns[index].id})"
    return where


def paper_grid(tables_path: str | Path) -> list[Mapping]:
    """The paper's grid config beside the tables file (none if it is not there)."""
    path = Path(tables_path).parent / "paper.yaml"
    return [load_yaml(path) or {}] if path.is_file() else []


def check_coordinates(specs: Mapping, grid: Mapping, path: str | Path) -> None:
    """:class:`ConfigError` naming ``path``, the table, the dotted key and the closest
    known name, for the first backbone, task, variant or seed set of the tables ``specs``
    that neither the grid config ``grid`` nor the paper's grid nor the backbone
    catalogue knows, or lambda, budget, init or seed no group of either runs (the nearest
    values they run named; see the module docstring)."""
    tables = validate(TablesFile, specs).root
    check_selectors(((f"{name}.{_where(table, where)}", selector)
                     for name, table in tables.items() for where, selector in selectors(table)),
                    grid, path, path)


def check_selectors(named: Iterable[tuple[str, object]], grid: Mapping, path: str | Path,
                    tables_path: str | Path) -> None:
    """:class:`ConfigError` naming ``path`` and the dotted key for the first of the
    ``named`` selectors (dotted key, :class:`~dfil.render.table_spec.Selector`) with a name
    no grid knows or a number no grid runs (the grid config ``grid`` and the paper's grid
    beside ``tables_path``). A strict grid (``render.strict``) must itself run or map each
    of them, but where a layer says ``expect: not run``: a cell it leaves out on purpose
    (the paper's own grid leaves none out)."""
    paper = paper_grid(tables_path)
    grids = [grid, *paper]
    anywhere = known_names(grids), run_values(grids)
    strict = bool((grid.get("render") or {}).get("strict"))
    own = (known_names([grid], catalogue=False), run_values([grid])) if strict else None
    # the paper's own grid runs every coordinate: no entry of it is left out on purpose
    expects = not paper or paper[0].get("name") != grid.get("name")
    for where, selector in named:
        _check(selector, *anywhere, f"{path}: {where}", ("any grid", "the grids run"))
        if strict and (selector.expect is None or not expects):
            _check(selector, *own, f"{path}: {where}", (f"this grid ({grid.get('name')})",
                                                        "it runs"),
                   "; an entry the grid leaves out on purpose says `expect: not run`"
                   if expects else "")


def _check(selector, known: Mapping[str, set], runs: Mapping[str, set], at: str,
           whose: tuple[str, str], hint: str = "") -> None:
    """:class:`ConfigError` ``at`` the first name of ``selector`` not ``known`` or number
    not in ``runs``; ``whose``: the grids they came from and what they run, for the
    message (the nearest values named)."""
    grids, run = whose
    for key, (_, words) in KINDS.items():
        value = getattr(selector, key)
        if value is not None and value not in known[key]:
            raise ConfigError(f"{at}.{key}: {unknown(f'{words} of {grids}', value, known[key])}"
                              f"{hint}")
    for key in VALUES:
        value = getattr(selector, key)
        if value is not None and (float(value) if key == "lam" else value) not in runs[key]:
            raise ConfigError(f"{at}.{key}: {value!r} is a {key} no cell of {grids} has: "
                              f"{run} {nearest(value, runs[key])}{hint}")
