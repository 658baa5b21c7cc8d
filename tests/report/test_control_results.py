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
        ("frog/tiny-llama/dfil+control_alone/lam0.5/nfull/qure/seed42",
         "compositional.from_text.self.all"): 0.96,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42",
         "compositional.from_text.self.all"): 0.56,
        ("frog/tiny-llama/dfil+control_alone/lam0.5/nfull/qure/seed123",
         "compositional.from_text.self.all"): 0.94,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed123",
         "compositional.from_text.self.all"): 0.54,
        ("frog/tiny-llama/dfil+control_alone/lam0.5/nfull/qure/seed42", "p_mae"): 0.2,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42", "p_mae"): 0.22,
        ("frog/tiny-llama/dfil+frozen/lam0.5/nfull/qure/seed42", "test.main.acc"): 0.5,
    }
    frame = pd.DataFrame([{**parse_key(k), "metric": m, "value": v}
                          for (k, m), v in values.items()])
    found = {r["control"]: r for r in control_results(grid, frame)}
    # +0.4 >= 0.1 on both seeds that ran, but seed 123's 0.94 is short of the 0.95 ceiling
    assert found["compositional"]["outcome"] == "failed"
    assert found["compositional"]["n"] == 2 and found["compositional"]["worst_control"] == 0.94
    assert found["compositional"]["difference"] == pytest.approx(0.4)
    assert found["compositional"]["cells"] == ("frog/tiny-llama/dfil",)
    assert found["monotonicity"]["outcome"] == "failed"  # -0.02, not <= -0.05
    assert found["ordinal"]["outcome"] == "not run"  # the ordinal runs have no rows
    assert found["ordinal"]["runs"] == "; ".join(
        f"ordinal_standin/tiny-llama/dfil+control/lam0.5/nfull/uniform/seed{s} vs "
        f"ordinal_standin/tiny-llama/dfil+frozen/lam0.5/nfull/uniform/seed{s}"
        for s in (42, 123, 456))
    assert found["ordinal"]["cells"] == ("ordinal_standin/tiny-llama/dfil",)
    assert control_results(grid, None) == []
