"""The schema of config/tables.yaml (dfil.render.table_spec): every error names the file,
the table and the dotted key."""

import copy
from pathlib import Path

import pytest
import yaml

from dfil.render import load_specs
from dfil.render.table_spec import TableSpec, check_specs
from dfil.util.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SPECS = load_specs(ROOT / "config/tables.yaml")


def test_the_shipped_tables_validate_and_load_as_written():
    raw = yaml.safe_load((ROOT / "config/tables.yaml").read_text())
    assert SPECS == raw  # validation checks, it does not rewrite
    assert check_specs(SPECS) is SPECS


@pytest.mark.parametrize("edit,message", [
    (lambda s: s["ablation"]["rows"][1]["cells"].pop("mono"),
     r"ablation\.rows\[1\]\.metric: 'test\.mf\.acc' would replace column 'mono''s own "
     r"metric 'grid\.1000\.nearest_center'; name the one it reads in cells\.mono\.metric"),
    (lambda s: s["scaling"]["rows"][0].update(lable="x"),
     r"scaling\.rows\[0\]\.lable: unknown key; did you mean 'label'\?"),
    (lambda s: s["scaling"]["columns"][0].update(fmt="pretty"),
     r"scaling\.columns\[0\]\.fmt: must be 'ms', .* or 'text', got 'pretty'"),
    (lambda s: s["headline"]["rows"][0]["cells"]["stat"]["with"]["p"].update(test="welsh"),
     r"headline\.rows\[0\]\.cells\.stat\.with\.p\.test: must be 'welch', .*got 'welsh'"),
    (lambda s: s["headline"]["rows"][0]["cells"]["stat"]["with"]["p"]["a"].update(methd=1),
     r"headline\.rows\[0\]\.cells\.stat\.with\.p\.a\.methd: unknown key; did you mean "
     r"'method'\?"),
    (lambda s: s["headline"]["rows"][0]["cells"]["stat"].update(tex=1.5),
     r"headline\.rows\[0\]\.cells\.stat\.tex: expected a string, got 1\.5"),
    (lambda s: s["headline"]["rows"][0]["cells"].update(efect={"tex": "x"}),
     r"headline\.rows\[0\]\.cells: 'efect' is not a column \['effect', 'stat'\]"),
    (lambda s: s["headline"]["where"].update(lam="0.5"),
     r"headline\.where\.lam: expected a number, got '0\.5'"),
    (lambda s: s["headline"]["where"].update(method="dfill"),
     r"headline\.where\.method: must be 'dfil', .*got 'dfill'"),
    (lambda s: s["headline"].pop("caption"), r"headline\.caption: required but missing"),
    (lambda s: s["headline"]["columns"].append({"fmt": "mean"}),
     r"headline\.columns\[2\]\.id: required but missing"),
    (lambda s: s["headline"]["rows"].append({"id": "z", "cells": {"stat": {"delta": ["a"]}}}),
     r"headline\.rows\[\d+\]\.cells\.stat\.delta\[1\]: required but missing"),
    (lambda s: s["headline"]["rows"][0]["cells"]["effect"].update(ref="compositional/x"),
     r"headline\.rows\[0\]\.cells\.effect\.ref: must match .*got 'compositional/x'"),
    (lambda s: s["headline"].update(bold=[{"by": "col", "among": ["x"]}]),
     r"headline\.bold\[0\]\.by: must be 'row' or 'column', got 'col'"),
])
def test_a_bad_table_names_file_table_and_key(edit, message):
    specs = copy.deepcopy(SPECS)
    edit(specs)
    with pytest.raises(ConfigError, match=rf"^conf/tables\.yaml: {message}"):
        check_specs(specs, "conf/tables.yaml")


def test_load_specs_names_the_file(tmp_path):
    path = tmp_path / "tables.yaml"
    path.write_text("t: {number: 1, label: x, caption: y, rows: [{id: r, lable: z}]}\n")
    with pytest.raises(ConfigError, match=rf"^{path}: t\.rows\[0\]\.lable: unknown key"):
        load_specs(path)


def test_the_table_schema_is_a_json_schema_with_no_unknown_keys():
    schema = TableSpec.model_json_schema()
    assert schema["additionalProperties"] is False
    entry = schema["$defs"]["EntrySpec"]
    assert entry["additionalProperties"] is False and "with" in entry["properties"]
