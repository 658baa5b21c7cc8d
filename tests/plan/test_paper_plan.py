"""Plans on the paper's grid (config/paper.yaml, config/tables.yaml): coverage by budget,
the whole grid's cost, a claim no budget can settle, and the plan's grid file run as is
(a dry run)."""


import pytest
import yaml

from dfil.cli import main
from dfil.config.grid import Grid, load_grid_files
from dfil.cost.archs import ARCHS
from dfil.plan import coordinate_hours, make_plan, paper_claims, seed_order
from dfil.plan.power import MAX_SEEDS
from dfil.render import load_specs
from snakemake_cli import ROOT, snakemake

# Plans over the paper's whole grid, seconds each: `pytest -m "not slow"` skips them.
pytestmark = pytest.mark.slow

#: The distinct claims of the paper's tables (73 places; T5 and T26 print the same
#: contrasts, as claims.csv's rows count them).
CLAIMS = 59


@pytest.fixture(scope="module")
def paper():
    grid = load_grid_files([ROOT / "config/paper.yaml"])
    claims = paper_claims(grid, load_specs(ROOT / "config/tables.yaml"))
    archs = {name: ARCHS[name] for name in grid.config["backbones"]}  # nothing fetched here
    return grid, claims, coordinate_hours(grid, archs), seed_order(grid.config, MAX_SEEDS)


def test_every_claim_of_the_report_is_read_once(paper):
    """The planner's claims are claims.csv's: one per distinct claim, by its id, each of
    the tables' 73 places in exactly one."""
    _, claims, _, _ = paper
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) == CLAIMS < 73
    places = [p for c in claims for p in c.places]
    assert len(places) == len(set(places)) == 73 and set(ids) <= set(places)
    headline = {c.table for c in claims if c.headline}
    assert headline == {2, 3, 4, 5, 6, 7}


def test_budget_zero_plans_nothing(paper):
    _, claims, hours, order = paper
    plan = make_plan(claims, hours, order, 0.0)
    assert plan.planned == 0 and not plan.runs and plan.projected == 0


def test_a_run_without_gpu_hours_is_never_priced_at_zero(paper):
    """coordinate_hours leaves out the coordinates of a backbone with no architecture;
    a plan that would draw one of their runs names it instead of counting it as 0."""
    grid, claims, _, order = paper
    archs = {name: ARCHS[name] for name in grid.config["backbones"]}
    hours = coordinate_hours(grid, {**archs, "qwen2.5-7b": None})
    assert hours and not any("/qwen2.5-7b/" in k for k in hours)
    with pytest.raises(ValueError, match=r"^claim .*: no GPU-hours for \S+/qwen2\.5-7b/.*"
                                         r"its backbone has no architecture"):
        make_plan(claims, hours, order, 1e9)


def test_coverage_never_shrinks_as_the_budget_grows(paper):
    _, claims, hours, order = paper
    counts = []
    for budget in (0, 2, 5, 10, 25, 40, 60, 100, 150, 250):
        plan = make_plan(claims, hours, order, budget)
        assert plan.projected <= budget
        counts.append(plan.planned)
    assert counts == sorted(counts) and counts[0] == 0 and counts[-1] > counts[1]


def test_the_whole_grids_cost_plans_every_claim_the_grid_can_test(paper):
    grid, claims, hours, order = paper
    whole = sum(hours[k.rsplit("/seed", 1)[0]] for k in grid.cells)
    plan = make_plan(claims, hours, order, whole)
    within = [r for r in plan.rows if r.plannable and r.runs <= set(grid.cells)]
    assert plan.planned >= len(within) > 20
    # and a budget of every plannable claim's runs plans each of them
    every = frozenset().union(*(r.runs for r in plan.rows if r.plannable))
    plan = make_plan(claims, hours, order, sum(hours[k.rsplit("/seed", 1)[0]] for k in every))
    assert all(r.planned for r in plan.rows if r.plannable)


def test_a_claim_no_budget_settles_says_how_many_seeds_it_needs(paper):
    _, claims, hours, order = paper
    rows = {r.claim.id: r for r in make_plan(claims, hours, order, 1000).rows}
    # Qwen2.5-72B: 77.2±1.5 vs 76.5±1.6, d = 0.7 / 1.551 = 0.451: 78.1 a side by
    # TTestIndPower, so 79
    r = rows["T5:qwen2.5-72b/delta"]
    assert not r.planned and r.why_not == "needs 79 seeds a side: not plannable"
    # T2's uniform-init effect, 41.6±7.3 vs 18.4±6.2: d = 3.43, three seeds a side
    assert rows["T2:uniform/effect"].need.seeds == 3
    assert rows["T7:finance/delta"].need.method == "spread unknown"
    # T7's overall Δ is T2's CSMC effect, read from the same runs: one claim, T2's id
    assert "T7:overall/delta" not in rows
    assert "T7:overall/delta" in rows["T2:csmc/effect"].claim.places


def test_budget_zero_writes_no_grid_file(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    assert main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "0", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"0 of {CLAIMS} claims planned at power 0.8 for 0 GPU-h" in printed
    assert "no grid file written" in printed and not out.exists()


def test_the_plans_grid_file_runs_as_is(tmp_path, capsys):
    out = tmp_path / "plan.yaml"
    assert main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "25",
                 "--claims", "T2,T12", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "of 6 claims planned at power 0.8 for 25 GPU-h" in printed
    config = yaml.safe_load(out.read_text())
    assert config["name"] == "paper"
    record = config["plan"]
    assert record["budget"] == 25 and record["power"] == 0.8 and record["alpha"] == 0.05
    assert record["end"] == "pessimistic" and record["considered"] == 6
    assert record["claims"] and all(c.split(":")[0] in ("T2", "T12") for c in record["claims"])
    assert f"{len(record['claims'])} of 6 claims planned" in printed
    plan = Grid(config)
    assert plan.spec.plan.claims == tuple(record["claims"])
    paper = load_grid_files([ROOT / "config/paper.yaml"])
    same = [k for k in plan.cells if k in paper.cells]
    assert same and all(plan.cells[k].config == paper.cells[k].config for k in same)
    dry = snakemake("-n", "all_tables", "--configfile", str(out))
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "train_cell" in dry.stdout and "all_tables" in dry.stdout


def test_a_claim_the_grid_has_no_cell_for_is_not_planned():
    """On the smoke grid (one tiny backbone, no 7B ablations), a claim none of whose
    sides the grid computes is never planned, not even at budget 0 (it costs nothing)."""
    grid = load_grid_files([ROOT / "config/smoke.yaml"])
    claims = paper_claims(grid, load_specs(ROOT / "config/tables.yaml"))
    archs = {name: b["arch"] for name, b in grid.config["backbones"].items()}
    hours = coordinate_hours(grid, archs)
    plan = make_plan(claims, hours, seed_order(grid.config, MAX_SEEDS), 0.0)
    assert plan.planned == 0
    rows = {r.claim.id: r for r in plan.rows}
    assert rows["T6:fine-tune-vs-dfil-7b"].why_not == "the grid has no cell for one side"
    absent = [r for r in plan.rows if not r.claim.sides]
    assert {r.claim.id.split(":")[0] for r in absent} == {"T3", "T5", "T12", "T17", "T18", "T26"}
    assert all(r.why_not == "the grid has no cell for it" and not r.plannable for r in absent)


def test_unknown_claims_are_a_usage_error(capsys):
    code = main(["grid", "plan", "--config", str(ROOT / "config/paper.yaml"), "--tables",
                 str(ROOT / "config/tables.yaml"), "--catalogue", "--gpu-hours", "5", "--claims",
                 "T99"])
    assert code == 2 and "no claim 'T99'" in capsys.readouterr().err


def test_the_planning_page_has_the_section_the_readme_links():
    assert "I have 40 GPU-hours: what can I check?" in (ROOT / "docs/planning.md").read_text()
    assert "(docs/planning.md)" in (ROOT / "README.md").read_text()
