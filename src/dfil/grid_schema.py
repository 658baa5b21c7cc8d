"""The strict JSON schema of a grid config (pure Python).

Generated from the config dataclasses (:func:`dataclass_schema`: every key optional, none
unknown) and the grid's own sections; committed as ``config/schema.json`` (``dfil grid
schema``) and checked by :class:`dfil.grid.Grid` on load, ``additionalProperties: false``
at every level.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Annotated, Literal, get_args, get_origin, get_type_hints

from dfil.cell import CellConfig
from dfil.config import Bound
from dfil.methods import METHODS

#: Names that become parts of run-directory paths and Snakemake wildcards (the grid's
#: name, backbones, tasks, variants): no braces, shell characters, separators or spaces.
NAME_PATTERN = "^[A-Za-z0-9_][A-Za-z0-9_.-]*$"


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
        "attn_implementation": {"enum": ["auto", "sdpa", "eager", "flash_attention_2",
                                         "flash_attention_3"]},
        "gradient_checkpointing": {"type": "boolean"},
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
                                               "n_hard": {"type": "integer"},
                                               "hard_form": {"enum": ["unseen_totals",
                                                                     "complement"]}})}),
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
