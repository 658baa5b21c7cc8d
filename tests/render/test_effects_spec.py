"""config/tables.yaml's ``effects:``: the contrasts a table declares must name published
entries, with a label and a numeric tolerance."""

from __future__ import annotations

import pytest
from test_render import SPEC

from dfil.render import check_specs
from dfil.util.errors import ConfigError


def test_effects_must_name_published_cells():
    with pytest.raises(ConfigError, match=r"effects\[0\]\.b: 'r/ft' is not a row/column"):
        check_specs({"t": {**SPEC["demo"], "effects": [{"label": "x", "a": "r/dfil",
                                                        "b": "r/ft"}]}})
    with pytest.raises(ConfigError, match=r"effects\[0\]\.label: required but missing"):
        check_specs({"t": {**SPEC["demo"], "effects": [{"a": "r/dfil", "b": "r/d"}]}})
    for bad, why in (("0.5", "expected a number, got '0.5'"), (-1, "must be >= 0, got -1"),
                     (True, "expected a number, got True")):
        with pytest.raises(ConfigError, match=rf"effects\[0\]\.tol: {why}$"):
            check_specs({"t": {**SPEC["demo"], "effects": [
                {"label": "x", "a": "r/dfil", "b": "r/d", "tol": bad}]}})
    check_specs({"t": {**SPEC["demo"], "effects": [
        {"label": "x", "a": "r/dfil", "b": "r/d", "tol": 0.5}]}})
