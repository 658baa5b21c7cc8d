"""The experiment grid as config: groups of (task, backbone, method, lambda, budget, init,
seed) expanded into cells, each trained once however many tables it feeds (pure Python).

A grid config (``config/paper.yaml``, ``config/config.yaml``, ``config/smoke.yaml``) is
validated against a strict JSON schema (:mod:`dfil.grid_schema`). A cell's run directory
is ``results/<name>/runs/<key>``, its key built by :func:`dfil.runkey.run_key`.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

import jsonschema

from dfil.cell import CellConfig, resolve
from dfil.config import ConfigError, deep_merge, from_dict, to_dict
from dfil.grid_schema import grid_schema
from dfil.runkey import applicable, format_key


@dataclass(frozen=True)
class Cell:
    """One run of the grid: its key (run-directory path), resolved config and resources."""

    key: str
    config: dict
    size: str
    groups: tuple[str, ...]
    tables: tuple[str, ...]


class Grid:
    """An expanded, validated grid config."""

    def __init__(self, config: Mapping, results_root: str = "results"):
        try:
            jsonschema.validate(dict(config), grid_schema())
        except jsonschema.ValidationError as err:
            where = ".".join(str(p) for p in err.absolute_path) or "<root>"
            if "propertyNames" in err.schema_path:
                raise ConfigError(
                    f"config {where}: name {err.instance!r} may hold only letters, digits, "
                    "'_', '.' and '-', and not start with '.' or '-': it becomes part of run "
                    "directories and Snakemake wildcards") from None
            raise ConfigError(f"config {where}: {err.message}") from None
        self.config = dict(config)
        self.name = config["name"]
        self.results = f"{results_root}/{self.name}"
        self.cells: dict[str, Cell] = {}
        for gname, group in config["groups"].items():
            self._expand(gname, group)

    def _seeds(self, gname: str, group: Mapping) -> list[int]:
        seeds = group["seeds"]
        if isinstance(seeds, str):
            try:
                return list(self.config.get("seed_sets", {})[seeds])
            except KeyError:
                raise ConfigError(
                    f"config groups.{gname}.seeds: unknown seed set {seeds!r}") from None
        return list(seeds)

    def _expand(self, gname: str, group: Mapping) -> None:
        cfg = self.config
        for field, table in (("tasks", "tasks"), ("backbones", "backbones")):
            for name in group[field]:
                if name not in cfg[table]:
                    raise ConfigError(f"config groups.{gname}.{field}: {name!r} is not in "
                                      f"{table} ({sorted(cfg[table])})")
        variant = group.get("variant", "")
        if variant and variant not in cfg.get("variants", {}):
            raise ConfigError(f"config groups.{gname}.variant: unknown variant {variant!r}")
        combos = itertools.product(group["tasks"], group["backbones"], group["methods"],
                                   group["lambdas"], group["budgets"], group["inits"],
                                   self._seeds(gname, group))
        for task, bb, method, lam, budget, init, seed in combos:
            lam_s, init_s, seed_s = applicable(method, lam, init, seed)
            key = format_key(task, bb, method, variant, lam_s, budget, init_s, seed_s)
            cell = self._cell_config(key, task, bb, method, variant, lam_s, budget, init_s,
                                     seed_s, group.get("cell", {}))
            size = cfg["backbones"][bb]["size"]
            if size not in cfg["resources"]:
                raise ConfigError(f"config backbones.{bb}.size: {size!r} is not in resources")
            old = self.cells.get(key)
            if old is not None:
                if old.config != cell:
                    raise ConfigError(f"config groups.{gname}: cell {key} is also built by "
                                      f"{old.groups} with a different configuration")
                cell_groups = old.groups + (gname,)
                tables = old.tables + tuple(t for t in group.get("tables", ())
                                            if t not in old.tables)
            else:
                cell_groups, tables = (gname,), tuple(group.get("tables", ()))
            self.cells[key] = Cell(key, cell, size, cell_groups, tables)

    def _cell_config(self, key, task, bb, method, variant, lam, budget, init, seed,
                     group_cell) -> dict:
        cfg = self.config
        entry = {k: v for k, v in cfg["backbones"][bb].items() if k not in ("size", "label")}
        cell = deep_merge(cfg.get("defaults", {}), cfg["tasks"][task].get("cell", {}))
        if variant:
            cell = deep_merge(cell, cfg["variants"][variant].get("cell", {}))
        cell = deep_merge(cell, group_cell)
        # Keys that do not apply to a method ("na") are left at their defaults, so that
        # e.g. a fine-tune cell is one cell whichever lambda its group lists.
        model = {"method": method, "backbone": {"name": bb, **entry}}
        if lam != "na":
            model["loss"] = {"lambda_dfil": float(lam)}
        if init != "na":
            model["heads"] = {"mf_init": init}
        pinned = {"name": key.replace("/", "_"), "model": model,
                  "data": {"budget": None if budget == "full" else int(budget)},
                  "train": {"seed": 0 if seed == "na" else int(seed)}}
        cell = deep_merge(cell, pinned)
        cell = _substitute(cell, {"results": self.results})
        try:
            return to_dict(resolve(from_dict(CellConfig, cell)))
        except ConfigError as err:
            raise ConfigError(f"config cell {key}: {err}") from None

    def cell(self, key: str) -> Cell:
        """The cell with run-directory key ``key``; ``ConfigError`` if it is not in the grid."""
        try:
            return self.cells[key]
        except KeyError:
            raise ConfigError(f"cell {key!r} is not in the configured grid of "
                              f"{self.name!r} ({len(self.cells)} cells)") from None

    def cell_json(self, key: str) -> str:
        """The resolved config of cell ``key`` as canonical JSON: what its ``cell.yaml``
        holds, handed to the job by the DAG (so a config edit that changes it reruns the
        cell, and no job parses the grid again)."""
        return json.dumps(self.cell(key).config, sort_keys=True, separators=(",", ":"))

    def key_pattern(self) -> str:
        """A regex matching exactly the configured keys (Snakemake wildcard constraint)."""
        return "|".join(re.escape(k) for k in sorted(self.cells))

    def resources(self, key: str) -> dict:
        return dict(self.config["resources"][self.cell(key).size])


def _substitute(value, names: dict):
    if isinstance(value, str):
        return value.replace("{results}", names["results"])
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    return value


def load_grid_files(paths) -> Grid:
    """A :class:`Grid` from YAML files merged in order (later files override)."""
    from dfil.yamlfile import load_yaml

    merged: dict = {}
    for path in paths:
        merged = deep_merge(merged, load_yaml(path) or {})
    try:
        return Grid(merged)
    except ConfigError as err:
        raise ConfigError(f"{', '.join(map(str, paths))}: {err}") from None
