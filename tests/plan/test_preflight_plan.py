"""``dfil grid preflight`` (what ``snakemake preflight`` runs) on a grid a plan wrote:
the plan's coverage again, after the cost table; nothing of a plan on any other grid."""

import yaml

from dfil.cli import main
from snakemake_cli import ROOT

SMOKE = ROOT / "config/smoke.yaml"
RECORD = {"budget": 25, "gpu": "h100", "end": "optimistic", "power": 0.8, "alpha": 0.05,
          "projected": 23.94, "considered": 6, "claims": ["T2:uniform/effect", "T12:a/b"]}


def _preflight(capsys, *configs) -> str:
    main(["grid", "preflight", "--config", *map(str, configs)])
    return capsys.readouterr().out


def test_a_planned_grid_prints_its_coverage_after_the_cost(tmp_path, capsys):
    block = tmp_path / "plan.yaml"
    block.write_text(yaml.safe_dump({"plan": RECORD}))
    out = _preflight(capsys, SMOKE, block)
    line = "2 of 6 claims planned at power 0.8 for 25 GPU-h (projected 23.9 GPU-h)"
    assert line in out
    assert "plan: GPU-hours on h100, the cost model's optimistic end" in out
    assert out.index("Projected GPU-hours") < out.index(line) < out.index("preflight:")


def test_a_grid_no_plan_wrote_prints_no_plan(capsys):
    assert "claims planned" not in _preflight(capsys, SMOKE)
