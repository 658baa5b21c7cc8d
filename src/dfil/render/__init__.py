"""Run results -> the paper's tables and figures.

``config/tables.yaml`` declares the 29 tables (:mod:`dfil.render.resolve` documents the
entry kinds); :class:`dfil.render.source.Source` reads their numbers from the tidy
aggregate table through the grid; :mod:`dfil.render.latex` prints each through its own
Jinja template; the report (:mod:`dfil.report`) sets them beside the paper's numbers.
"""

from __future__ import annotations

from pathlib import Path

from dfil.config.yamlfile import load_yaml
from dfil.render.entries import Table
from dfil.render.resolve import Resolver
from dfil.render.source import Source
from dfil.render.table_spec import check_specs
from dfil.util.errors import ConfigError


def load_specs(path: str | Path) -> dict:
    """The declared tables of ``path`` (``config/tables.yaml``), checked
    (:func:`dfil.render.table_spec.check_specs`)."""
    specs = load_yaml(path)
    if not isinstance(specs, dict):
        raise ConfigError(f"{path}: expected a mapping of table name to table")
    return check_specs(specs, str(path))


def table_names(specs: dict) -> list[str]:
    """The paper's tables in their order (internal helper tables left out)."""
    return sorted((n for n, s in specs.items() if not s.get("internal")),
                  key=lambda n: specs[n]["number"])


def file_stem(specs: dict, name: str) -> str:
    """``T05-scaling``: the file name of a rendered table (no characters LaTeX's
    ``\\input`` would need escaped)."""
    return f"T{specs[name]['number']:02d}-{name.replace('_', '-')}"


def table_keys(specs: dict, grid, name: str) -> list[str]:
    """The grid's run keys whose numbers table ``name`` prints (tables it refers to
    included): what its Snakemake rule waits for."""
    return sorted(Resolver(specs, Source(grid)).table(name).keys)


__all__ = ["Resolver", "Source", "Table", "check_specs", "file_stem", "load_specs",
           "table_keys", "table_names"]
