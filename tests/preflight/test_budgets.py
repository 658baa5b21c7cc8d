"""A few-shot budget larger than its data is refused once the data exists, naming the grid
key; while the data is not on disk yet, nothing is said (training refuses it then)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dfil.config.grid import load_grid_files
from dfil.data.synthetic import write_frog_like
from dfil.preflight.budgets import check_budgets
from dfil.util.errors import ConfigError

SMOKE = Path(__file__).resolve().parents[2] / "config" / "smoke.yaml"


def grid_with_budget(tmp_path: Path, budget: int):
    text = SMOKE.read_text()
    assert text.count("budgets: [16]") == 1
    path = tmp_path / "grid.yaml"
    path.write_text(text.replace("budgets: [16]", f"budgets: [{budget}]"))
    return load_grid_files([path])


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_budget_the_data_cannot_fill_is_refused_naming_the_key(workdir):
    write_frog_like(workdir / "results" / "smoke" / "data" / "frog", seed=0, n_easy=96,
                    n_hard=40)
    check_budgets(grid_with_budget(workdir, 16))  # fits
    with pytest.raises(ConfigError, match=r"^groups\.fewshot\.budgets: .*training split of "
                       r"results/smoke/data/frog .*lower the budget or use more data$"):
        check_budgets(grid_with_budget(workdir, 5000))


def test_without_the_data_the_budget_waits_for_training(workdir):
    check_budgets(grid_with_budget(workdir, 5000))
