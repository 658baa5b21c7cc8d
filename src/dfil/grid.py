"""The experiment grid as config: groups of (task, backbone, method, lambda, budget, init,
seed) expanded into cells, each trained once however many tables it feeds (pure Python).

A grid config (``config/paper.yaml``, ``config/config.yaml``, ``config/smoke.yaml``) is
validated against a strict JSON schema (:func:`grid_schema`, committed as
``config/schema.json``; ``additionalProperties: false`` at every level). A cell's run
directory is ``results/<name>/runs/<key>``, with the key
``<task>/<backbone>/<method>[+<variant>]/lam<lambda>/n<budget>/<init>/seed<seed>``.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal, get_args, get_origin, get_type_hints

import jsonschema

from dfil.cell import CellConfig, resolve
from dfil.config import Bound, ConfigError, from_dict, to_dict
from dfil.model.methods import METHODS, method_spec

#: Names that become parts of run-directory paths and Snakemake wildcards (the grid's
#: name, backbones, tasks, variants): no braces, shell characters, separators or spaces.
NAME_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"
#: Methods whose loss has no membership CE: lambda_DFIL does not apply ("na").
_NO_LAMBDA = {name for name, s in METHODS.items() if s.mf is None}
#: Methods without an MF: the init does not apply ("na").
_NO_INIT = {name for name, s in METHODS.items() if s.mf is None}


def dataclass_schema(cls) -> dict:
    """JSON schema of a (partial) config dataclass: every key optional, none unknown."""
    hints = get_type_hints(cls, include_extras=True)
    props = {f.name: _type_schema(hints[f.name]) for f in dataclasses.fields(cls)}
    return {"type": "object", "additionalProperties": False, "properties": props}


def _type_schema(hint) -> dict:
    origin = get_origin(hint)
    if origin is Annotated:
        base, *extras = get_args(hint)
        limits = {k: v for b in extras if isinstance(b, Bound) for k, v in b.schema().items()}
        return {**_type_schema(base), **limits}
    if dataclasses.is_dataclass(hint):
        return dataclass_schema(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_type_schema(a) for a in get_args(hint)]}
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin is tuple:
        return {"type": "array", "items": _type_schema(get_args(hint)[0])}
    if origin is dict:  # a transformers config for random weights: free-form by nature
        return {"type": "object"}
    return {int: {"type": "integer"}, float: {"type": "number"}, bool: {"type": "boolean"},
            str: {"type": "string"}, type(None): {"type": "null"}}[hint]


def grid_schema() -> dict:
    """The strict schema of a grid config."""
    cell = {"$ref": "#/$defs/cell"}
    names = {"type": "array", "items": {"type": "string"}, "minItems": 1}

    def mapping(value: dict) -> dict:
        return {"type": "object", "additionalProperties": value}

    def named(value: dict) -> dict:  # a mapping whose keys end up in paths
        return {**mapping(value), "propertyNames": {"pattern": NAME_PATTERN}}

    def obj(props: dict, required=()) -> dict:
        return {"type": "object", "additionalProperties": False, "properties": props,
                "required": list(required)}

    backbone = obj({
        "model_id": {"type": "string"}, "tokenizer": {"type": "string"},
        "arch": {"type": "object"}, "quantized": {"type": "boolean"},
        "trust_remote_code": {"type": "boolean"},
        "dtype": {"enum": ["float32", "bfloat16", "float16"]},
        "attn_implementation": {"enum": ["sdpa", "eager", "flash_attention_2"]},
        "size": {"type": "string"}, "label": {"type": "string"},
    }, required=("size",))
    resource = obj({"gpu": {"type": "integer", "minimum": 0},
                    "gpu_model": {"type": "string"}, "mem_mb": {"type": "integer"},
                    "runtime": {"type": "integer"}, "cpus_per_task": {"type": "integer"}},
                   required=("mem_mb", "runtime"))
    group = obj({
        "description": {"type": "string"},
        "tasks": names, "backbones": names,
        "methods": {"type": "array", "items": {"enum": sorted(METHODS)}, "minItems": 1},
        "lambdas": {"type": "array", "items": {"type": "number"}, "minItems": 1},
        "budgets": {"type": "array", "minItems": 1,
                    "items": {"anyOf": [{"const": "full"}, {"type": "integer", "minimum": 1}]}},
        "inits": {"type": "array", "items": {"enum": ["qure", "uniform"]}, "minItems": 1},
        "seeds": {"anyOf": [{"type": "string"},
                            {"type": "array", "items": {"type": "integer"}, "minItems": 1}]},
        "variant": {"type": "string"},
        # Overrides for this group's cells that do not change their keys (a key built by
        # two groups with different overrides is an error).
        "cell": cell,
        "tables": {"type": "array", "items": {"type": "string"}},
    }, required=("tasks", "backbones", "methods", "lambdas", "budgets", "inits", "seeds"))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "dfil grid config",
        **obj({
            "name": {"type": "string", "pattern": NAME_PATTERN},
            "description": {"type": "string"},
            "defaults": cell,
            "embedded_data": obj({"frog": obj({"seed": {"type": "integer"},
                                               "n_easy": {"type": "integer"},
                                               "n_hard": {"type": "integer"}})}),
            "fetch_backbones": {"type": "array", "items": {"type": "string"}},
            "probe_seed": {"type": "integer"},
            "seed_sets": mapping({"type": "array", "items": {"type": "integer"}}),
            "backbones": named(backbone),
            "resources": mapping(resource),
            "tasks": named(obj({"cell": cell})),
            "variants": named(obj({"description": {"type": "string"}, "cell": cell})),
            "groups": mapping(group),
            # How config/tables.yaml's paper coordinates map onto this grid's cells.
            "render": obj({
                "standin": {"type": "string"},
                "backbones": mapping({"type": "string"}),
                "tasks": mapping({"type": "string"}),
                "lambdas": mapping({"type": "number"}),
                "variants": mapping({"type": "string"}),
                "seed_sets": mapping({"type": "string"}),
            }),
        }, required=("name", "backbones", "resources", "tasks", "groups")),
        "$defs": {"cell": dataclass_schema(CellConfig)},
    }


@dataclass(frozen=True)
class Cell:
    """One run of the grid: its key (run-directory path), resolved config and resources."""

    key: str
    config: dict
    size: str
    groups: tuple[str, ...]
    tables: tuple[str, ...]


def _merge(base: dict, over: Mapping) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k),
                                                                             dict) else v
    return out


def _fmt(x: float) -> str:
    return f"{x:g}"


def _applicable(method, lam, init, seed) -> tuple[str, str, str]:
    """lambda, init and seed as written in a key: "na" where they do not apply to the
    method (and a method's fixed lambda in place of the group's), so that e.g. a
    fine-tune cell is one cell whichever lambda or init its group lists."""
    spec = method_spec(method)
    lam_s = "na" if method in _NO_LAMBDA else _fmt(
        spec.lambda_dfil if spec.lambda_dfil is not None else float(lam))
    return (lam_s, "na" if method in _NO_INIT else init,
            "na" if not spec.trains else str(seed))


def _key(task, backbone, method, variant, lam, budget, init, seed) -> str:
    m = method + (f"+{variant}" if variant else "")
    return f"{task}/{backbone}/{m}/lam{lam}/n{budget}/{init}/seed{seed}"


def cell_key(task, backbone, method, variant, lam, budget, init, seed) -> str:
    """The run-directory key of a cell given in the grid's own terms."""
    lam_s, init_s, seed_s = _applicable(method, lam, init, seed)
    return _key(task, backbone, method, variant, lam_s, budget, init_s, seed_s)


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
            lam_s, init_s, seed_s = _applicable(method, lam, init, seed)
            key = _key(task, bb, method, variant, lam_s, budget, init_s, seed_s)
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
        cell = _merge(cfg.get("defaults", {}), cfg["tasks"][task].get("cell", {}))
        if variant:
            cell = _merge(cell, cfg["variants"][variant].get("cell", {}))
        cell = _merge(cell, group_cell)
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
        cell = _merge(cell, pinned)
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
        merged = _merge(merged, load_yaml(path) or {})
    try:
        return Grid(merged)
    except ConfigError as err:
        raise ConfigError(f"{', '.join(map(str, paths))}: {err}") from None
