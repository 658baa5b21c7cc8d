"""The positive controls' result rows read from the aggregate table."""

from pathlib import Path

import pandas as pd
import pytest
import yaml

from dfil.config.grid import Grid
from dfil.config.runkey import parse_key
from dfil.report.build import control_results

SMOKE = Path(__file__).resolve().parents[2] / "config" / "smoke.yaml"


def test_control_results_pair_the_control_and_reference_runs():
    grid = Grid(yaml.safe_load(SMOKE.read_text()))
    values = {  # (key, metric): value
        ("frog/tiny-llama/dfil+control/lam0.5/nfull/qure/seed42",
         "compositional.from_text.self.all"): 0.6,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42",
         "compositional.from_text.self.all"): 0.2,
        ("frog/tiny-llama/dfil+control/lam0.5/nfull/qure/seed42", "p_mae"): 0.2,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42", "p_mae"): 0.22,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42", "test.main.acc"): 0.5,
    }
    frame = pd.DataFrame([{**parse_key(k), "metric": m, "value": v}
                          for (k, m), v in values.items()])
    found = {r["control"]: r for r in control_results(grid, frame)}
    assert found["compositional"]["outcome"] == "passed"  # +0.4 >= 0.1
    assert found["compositional"]["difference"] == pytest.approx(0.4)
    assert found["monotonicity"]["outcome"] == "failed"  # -0.02, not <= -0.05
    assert found["ordinal"]["outcome"] == "not run"  # the ordinal runs have no rows
    assert found["ordinal"]["runs"] == (
        "ordinal_standin/tiny-llama/dfil+control/lam0.5/nfull/uniform/seed42 vs "
        "ordinal_standin/tiny-llama/dfil+frozen/lam0.5/nfull/uniform/seed42")
    assert control_results(grid, None) == []
