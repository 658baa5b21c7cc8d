"""Run results -> the paper's tables, the paper-diff report and figures.

``config/tables.yaml`` declares the 29 tables (:mod:`dfil.render.resolve` documents the
cell kinds); :class:`dfil.render.source.Source` reads their numbers from the tidy
aggregate table through the grid; :mod:`dfil.render.latex` prints each through its own
Jinja template; :mod:`dfil.render.diff` sets them beside the numbers the paper printed.
"""

from __future__ import annotations

from pathlib import Path

from dfil.errors import ConfigError
from dfil.render.entries import Table
from dfil.render.resolve import Resolver
from dfil.render.source import SELECTORS, Source
from dfil.yamlfile import load_yaml

_TABLE_KEYS = {"number", "label", "caption", "where", "defaults", "columns", "rows", "bold",
               "footnotes", "internal", "effects"}
_EFFECT_KEYS = {"label", "a", "b", "tol"}
_CELL_KEYS = set(SELECTORS) | {"id", "fmt", "digits", "hidden", "delta", "test", "a", "b",
                               "ref", "tex", "with", "wins", "against", "show", "ratio", "holm",
                               "margin"}
_ROW_KEYS = set(SELECTORS) | {"id", "label", "cells", "paper", "rows", "reduce", "over",
                              "hidden", "fmt", "digits", "rule", "section"}
_FORMATS = {"ms", "mean", "std", "signed", "center", "int", "pct", "p", "n", "text"}


def _check_cell(spec: dict, where: str) -> None:
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a mapping, got {spec!r}")
    unknown = set(spec) - _CELL_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}")
    if "tex" in spec and not isinstance(spec["tex"], str):
        raise ConfigError(f"{where}.tex: {spec['tex']!r} is not a string (quote it in YAML)")
    if spec.get("fmt", "ms") not in _FORMATS:
        raise ConfigError(f"{where}.fmt: {spec['fmt']!r} is not one of {sorted(_FORMATS)}")
    for name, sub in (spec.get("with") or {}).items():
        _check_cell(sub, f"{where}.with.{name}")


def check_specs(specs: dict, path: str = "config/tables.yaml") -> dict:
    """``specs`` if every table, column, row and cell uses only known keys and refers only
    to its own columns; ``ConfigError`` naming the first offending path otherwise."""
    for name, spec in specs.items():
        at = f"{path}: {name}"
        unknown = set(spec) - _TABLE_KEYS
        if unknown:
            raise ConfigError(f"{at}: unknown key(s) {sorted(unknown)}")
        for k in ("number", "label", "caption"):
            if k not in spec:
                raise ConfigError(f"{at}: missing {k!r}")
        cols = [c.get("id") for c in spec.get("columns", [])]
        for i, col in enumerate(spec.get("columns", [])):
            _check_cell(col, f"{at}.columns[{i}]")
        for i, row in enumerate(spec.get("rows", [])):
            unknown = set(row) - _ROW_KEYS
            if unknown:
                raise ConfigError(f"{at}.rows[{i}]: unknown key(s) {sorted(unknown)}")
            for col, cell in (row.get("cells") or {}).items():
                if col not in cols:
                    raise ConfigError(f"{at}.rows[{i}].cells: {col!r} is not a column {cols}")
                if cell is not None:
                    _check_cell(cell, f"{at}.rows[{i}].cells.{col}")
            for col in row.get("paper") or {}:
                if col not in cols:
                    raise ConfigError(f"{at}.rows[{i}].paper: {col!r} is not a column {cols}")
        for i, note in enumerate(spec.get("footnotes", [])):
            _check_cell(note, f"{at}.footnotes[{i}]")
        published = {(str(r["id"]), c) for r in spec.get("rows", []) if "id" in r
                     for c in r.get("paper") or {}}
        for i, effect in enumerate(spec.get("effects", [])):
            _check_effect(effect, published, f"{at}.effects[{i}]")
    return specs


def _check_effect(effect: dict, published: set, where: str) -> None:
    """An effect names two cells of its table that have a published number."""
    if not isinstance(effect, dict) or set(effect) - _EFFECT_KEYS or not {
            "label", "a", "b"} <= set(effect):
        raise ConfigError(f"{where}: expected {{label, a, b[, tol]}}, got {effect!r}")
    tol = effect.get("tol", 0)
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0:
        raise ConfigError(f"{where}.tol: expected a number >= 0, got {tol!r}")
    for side in ("a", "b"):
        ref = tuple(str(effect[side]).split("/"))
        if ref not in published:
            raise ConfigError(f"{where}.{side}: {effect[side]!r} is not a row/column with "
                              "a published number")


def load_specs(path: str | Path) -> dict:
    """The declared tables of ``path`` (``config/tables.yaml``), checked."""
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
